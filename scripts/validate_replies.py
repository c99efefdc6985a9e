#!/usr/bin/env python3
"""Every reply the integration tests read, checked against docs/openapi.yaml
with a real OpenAPI validator (openapi-core): its status is documented for
its operation, its body matches that response's schema, and its declared
headers are there. Reads the JSON lines the suite's request helper writes
(`SEATCLAIM_REPLY_RECORD`, set by `make test`), prints how many replies,
operations and (operation, status) pairs it checked, and fails on any
mismatch. Requests to paths the spec does not have (the dev server's own
routes, a test's deliberately unknown path) are counted and skipped: no
operation says what they answer.

Usage: validate_replies.py <record folder> [--spec docs/openapi.yaml]
"""

import argparse
import collections
import json
import pathlib
import re
import sys
import urllib.parse

import yaml

from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse

# The spec's one server: requests are matched against it.
HOST = "http://127.0.0.1:3000"


def replies(folder):
    for path in sorted(pathlib.Path(folder).glob("replies-*.jsonl")):
        with path.open() as lines:
            for line in lines:
                if line.strip():
                    yield json.loads(line)


def check(openapi, reply):
    """None when the reply conforms; the validator's complaint otherwise."""
    url = urllib.parse.urlsplit(reply["uri"])
    args = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
    request = MockRequest(HOST, reply["method"].lower(), url.path, args=args)
    response = MockResponse(
        json.dumps(reply["body"]).encode(),
        status_code=reply["status"],
        content_type=reply["headers"].get("content-type", "application/json"),
        headers=reply["headers"],
    )
    result = openapi.unmarshal_response(request, response)
    if result.errors:
        return "; ".join(describe(e) for e in result.errors)
    return None


def describe(error):
    """The validator's complaint: its kind and each schema error's message."""
    cause = error.__cause__ or error
    messages = [getattr(e, "message", str(e)) for e in getattr(cause, "schema_errors", ())]
    return f"{type(error).__name__}: " + ("; ".join(messages) or str(cause))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--spec", default="docs/openapi.yaml")
    args = parser.parse_args()
    openapi = OpenAPI.from_file_path(args.spec)
    ops = templates(args.spec)
    operations = collections.Counter()
    skipped = collections.Counter()
    failures = []
    total = 0
    for reply in replies(args.folder):
        total += 1
        operation = operation_of(ops, reply)
        if operation is None and reply["status"] == 405:
            # A method the path does not have: its 405 (with `Allow`) is
            # documented on the path's own operations; checked as theirs.
            as_theirs = as_documented_405(ops, reply)
            if as_theirs is not None:
                reply, operation = as_theirs, operation_of(ops, as_theirs)
        if operation is None:
            skipped[reply["method"] + " /" + reply["uri"].split("?")[0].split("/")[1]] += 1
            continue
        operations[(operation, reply["status"])] += 1
        if "content-encoding" in reply["headers"]:
            # A compressed body (availability, gzip) is recorded without
            # it: its status must still be one the operation documents.
            documented = next(codes for m, t, _, codes in ops if f"{m} {t}" == operation)
            complaint = None if reply["status"] in documented else f"undocumented status {reply['status']}"
        else:
            complaint = check(openapi, reply)
        if complaint:
            failures.append((reply, complaint))
    if total == 0:
        sys.exit(f"no replies recorded in {args.folder}: was SEATCLAIM_REPLY_RECORD set?")
    covered = {op for op, _ in operations}
    print(
        f"replies: {total} read, {sum(operations.values())} checked against the spec "
        f"({len(covered)} operations, {len(operations)} operation-status pairs), "
        f"{sum(skipped.values())} to paths the spec does not have ({dict(skipped)})"
    )
    documented = {(f"{m} {t}", code) for m, t, _, codes in ops for code in codes}
    unreached = sorted(documented - set(operations))
    print(
        f"replies: {len(documented)} operation-status pairs documented; the suite reached "
        f"{len(documented) - len(unreached)}; not reached: "
        f"{', '.join(f'{op} {code}' for op, code in unreached[:12])}"
        f"{' …' if len(unreached) > 12 else ''}"
    )
    for (reply, complaint) in failures[:20]:
        print(
            f"MISMATCH {reply['method']} {reply['uri']} -> {reply['status']}: {complaint}\n"
            f"  body: {json.dumps(reply['body'])[:400]}"
        )
    if failures:
        sys.exit(f"{len(failures)} of {total} replies do not conform to {args.spec}")


def templates(spec_path):
    """Each (METHOD, path template) of the spec, with a pattern its
    requests' paths match and the statuses it documents."""
    spec = yaml.safe_load(pathlib.Path(spec_path).read_text())
    out = []
    for template, item in spec["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(template)) + "$")
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "patch"):
                statuses = {int(code) for code in operation["responses"]}
                out.append((method.upper(), template, pattern, statuses))
    return out


def as_documented_405(ops, reply):
    """The 405 reply as one of its path's operations that documents 405
    would give it, or None."""
    path = urllib.parse.urlsplit(reply["uri"]).path
    for method, _, pattern, statuses in ops:
        if pattern.match(path) and 405 in statuses:
            return {**reply, "method": method}
    return None


def operation_of(ops, reply):
    """The spec's operation for a reply's request, or None."""
    path = urllib.parse.urlsplit(reply["uri"]).path
    for method, template, pattern, _ in ops:
        if method == reply["method"] and pattern.match(path):
            return f"{method} {template}"
    return None


if __name__ == "__main__":
    main()
