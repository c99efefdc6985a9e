#!/usr/bin/env python3
"""Runs the documentation's runnable examples against a fresh dev server.

Every fenced block in README.md and docs/*.md whose info string is
`bash runnable` or `python runnable <name>` is run, in file order, against
seatclaim-dev started on free ports (its DynamoDB Local included, so every
run starts empty):

- a bash block runs under `bash -euo pipefail`, `localhost:3000` (as the
  docs write it, for `make dev`) pointed at this server, and with `curl`
  failing on any HTTP error, so a request the docs show that the API
  refuses fails the run;
- a python block defines what the docs show; the check registered here
  under its name (CHECKS) is appended and uses it against the server (a
  block with no check fails the run: nothing would prove it works).

The server trusts buyer tokens of a key generated for this run
(scripts/admission_keys.py) under the issuer the docs use, so the docs'
buyer-token examples sign with a real key of their own: the pair is in
`buyer-keys.txt` of the folder every block runs in (as INTEGRATING.md has
the reader make it), and the project venv's python (PyJWT) is first on
PATH.

Prints each block's place and how it ended (SNIPPETS_VERBOSE=1: and what it
printed); exits non-zero if any failed.

    .tools/venv/bin/python scripts/run_doc_snippets.py
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dev_server
from ports import free_ports

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".tools" / "venv" / "bin" / "python"
FENCE = re.compile(r"^```(bash|python) runnable(?: ([a-z0-9-]+))?\s*$")
DOC_PORT = "localhost:3000"
# SNIPPETS_VERBOSE=1 prints what every block printed, not only a failed one's.
VERBOSE = os.environ.get("SNIPPETS_VERBOSE") == "1"
# The issuer the docs' buyer-token example writes.
BUYER_ISSUER = "https://shop.example"

BASH_PREAMBLE = """
curl() { command curl --fail-with-body "$@"; }
"""

# What proves a python block works, by its name: appended to the block and
# run with SEATCLAIM_API (the server) and BUYER_PRIVATE_LINE (the run's key).
CHECKS = {
    "buyer-token": '''
import json as _json, os as _os, urllib.error as _error, urllib.request as _request

def _call(method, path, body=None, headers=None):
    data = None if body is None else _json.dumps(body).encode()
    req = _request.Request(_os.environ["SEATCLAIM_API"] + path, data=data, method=method,
                           headers={"content-type": "application/json", **(headers or {})})
    try:
        with _request.urlopen(req) as reply:
            return reply.status, _json.loads(reply.read() or b"null")
    except _error.HTTPError as refused:
        return refused.code, _json.loads(refused.read() or b"null")

_plan = {"name": "Limited", "holdSeconds": 60, "buyerLimit": 2,
         "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 4}]}]}
assert _call("PUT", "/events/snippet-limited", _plan)[0] == 201
_token = buyer_token(_os.environ["BUYER_PRIVATE_LINE"], "snippet-limited", "user:18734")
_status, _reply = _call("POST", "/events/snippet-limited/orders", {}, {"X-Buyer-Token": _token})
assert _status == 201, (_status, _reply)
_status, _reply = _call("GET", "/orders/" + _reply["orderId"], None,
                        {"Authorization": "Bearer " + _reply["holdToken"]})
assert (_status, _reply.get("buyerId")) == (200, "user:18734"), (_status, _reply)
# Another event's token is refused, naming the rule.
_other = buyer_token(_os.environ["BUYER_PRIVATE_LINE"], "another-event", "user:18734")
_status, _reply = _call("POST", "/events/snippet-limited/orders", {}, {"X-Buyer-Token": _other})
assert (_status, _reply.get("reason")) == (401, "token-audience"), (_status, _reply)
print("buyer-token: a token it made opened an order for user:18734; another event's was refused")
''',
}


def blocks():
    """(file, line, language, name, text) of every runnable block."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for path in files:
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            found = FENCE.match(lines[i])
            if not found:
                i += 1
                continue
            start = i + 1
            end = start
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            yield path.relative_to(ROOT), start, found.group(1), found.group(2), "\n".join(lines[start:end]) + "\n"
            i = end + 1


def buyer_keys():
    """A key pair for this run: (private set, public set), one JSON line each."""
    made = subprocess.run([str(PYTHON), str(ROOT / "scripts" / "admission_keys.py"), "--kid", "snippets"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    return made[0], made[1]


def run(block, base: str, env: dict, work: Path) -> tuple:
    path, line, language, name, text = block
    if language == "bash":
        script = BASH_PREAMBLE + text.replace(DOC_PORT, base.removeprefix("http://"))
        cmd = ["bash", "-euo", "pipefail", "-c", script]
    else:
        if name not in CHECKS:
            return False, f"no check is registered for the python block '{name}'"
        source = work / f"{name or 'block'}.py"
        source.write_text(text + CHECKS[name])
        cmd = [str(PYTHON), str(source)]
    done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=120)
    out = (done.stdout + done.stderr).strip()
    return done.returncode == 0, out


def main() -> int:
    found = list(blocks())
    if not found:
        raise SystemExit("snippets: no runnable block found")
    work = Path(tempfile.mkdtemp(prefix="seatclaim-snippets-"))
    private_line, public_line = buyer_keys()
    (work / "buyer-keys.txt").write_text(f"{private_line}\n{public_line}\n")
    port, dynamodb_port = free_ports(2)
    base = f"http://127.0.0.1:{port}"
    server_env = {"BUYER_VERIFY_KEYS": public_line, "BUYER_ISSUER": BUYER_ISSUER}
    # The docs show make dev's own development CONFIRM_SECRET.
    saved = os.environ.pop("CONFIRM_SECRET", None)
    proc = dev_server.start(port, dynamodb_port, work / "server.log", "snippets", server_env)
    failed = 0
    started = time.monotonic()
    try:
        env = dict(os.environ, SEATCLAIM_API=base, BUYER_PRIVATE_LINE=private_line,
                   PATH=f"{PYTHON.parent}:{os.environ.get('PATH', '')}")
        for block in found:
            ok, out = run(block, base, env, work)
            path, line, language, name, _ = block
            where = f"{path}:{line} ({language}{' ' + name if name else ''})"
            print(f"snippets: {where}: {'ok' if ok else 'FAILED'}")
            if VERBOSE and ok:
                print("  " + out.replace("\n", "\n  "))
            if not ok:
                failed += 1
                print("  " + out.replace("\n", "\n  ")[-3000:])
    finally:
        dev_server.stop(proc)
        if saved is not None:
            os.environ["CONFIRM_SECRET"] = saved
    print(f"snippets: {len(found) - failed} of {len(found)} runnable blocks passed, "
          f"in {time.monotonic() - started:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
