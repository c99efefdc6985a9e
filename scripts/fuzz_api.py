#!/usr/bin/env python3
"""Fuzzes the dev server with schemathesis against docs/openapi.yaml.

Starts seatclaim-dev from cargo's target directory (scripts/cargo_target.py;
DynamoDB Local included) on free ports, seeds an event, orders and holds so
that the order routes have real things to work on (payments confirmed as
Standard Webhooks, scripts/webhook_sign.py, naming the order and its seats),
runs `st run` on the schema the server itself serves (`GET /openapi.yaml`),
then checks:

- schemathesis found nothing (no 5xx, every status, content type, header
  and body as the spec says);
- no response at all was a 5xx (counted by scripts/fuzz_hooks.py);
- the server is still alive and answering afterwards.

Prints `fuzz: N requests, ...` and a closing `fuzz: P passed, F failed`.
Exits non-zero on any failure. Stops the server (and its DynamoDB Local)
with SIGINT in every case.

    .tools/venv/bin/python scripts/fuzz_api.py --max-examples 25
    .tools/venv/bin/python scripts/fuzz_api.py --max-examples 1500
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import dev_server
from cargo_target import binary
from ports import free_ports
from webhook_sign import DEV_SECRET, confirm_body, webhook_headers

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".tools" / "venv" / "bin"
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
])
SEED_EVENT = "fuzz-event"
# The server's CONFIRM_SECRET, also used by scripts/fuzz_hooks.py to sign.
SECRET = os.environ.get("FUZZ_CONFIRM_SECRET", DEV_SECRET)


def call(base: str, method: str, path: str, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def expect(status_body, want: int, what: str):
    status, body = status_body
    if status != want:
        raise SystemExit(f"fuzz: seeding failed: {what}: {status} {body[:300]!r}")
    return json.loads(body) if body else None


def confirm(base: str, order_id: str, payment: str, seats: list):
    """The payment backend's call: a body naming the order and exactly the
    seats paid for, signed now (Standard Webhooks)."""
    body = confirm_body(order_id, payment, seats)
    req = urllib.request.Request(f"{base}/orders/{order_id}/confirm", data=body, method="POST",
                                 headers={**webhook_headers(body, SECRET), "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def seed(base: str) -> dict:
    """Orders in every state for the order routes to work on: holding seats,
    full (MAX_SEATS_PER_ORDER = 10 seats), empty, completed, expired, and
    refund-due (expired, its seat sold to another order since); and three
    holding seats for the Stripe route alone."""
    plan = {"name": "Fuzz", "holdSeconds": 7200, "sections": [
        {"sectionId": "A", "rows": [{"row": "1", "count": 10}, {"row": "2", "count": 10}]},
        {"sectionId": "B", "rows": [{"row": "1", "count": 10}]},
    ]}
    expect(call(base, "PUT", f"/events/{SEED_EVENT}", plan), 201, "create the event")
    expect(call(base, "PUT", "/events/fuzz-short",
                {"name": "Short", "holdSeconds": 1, "sections": [{"sectionId": "S", "rows": [{"row": "1", "count": 3}]}]}),
           201, "create the short event")
    seats = [f"A-{r}-{n}" for r in (1, 2) for n in range(1, 11)] + [f"B-1-{n}" for n in range(1, 11)]

    def order(event: str, holds: list) -> dict:
        o = expect(call(base, "POST", f"/events/{event}/orders", {"userId": "fuzz@example.com"}), 201, "create an order")
        for seat in holds:
            expect(call(base, "POST", f"/orders/{o['orderId']}/seats/{seat}",
                        headers={"Authorization": f"Bearer {o['holdToken']}"}), 200, f"hold {seat}")
        o["seats"] = list(holds)  # what a payment for this order names (scripts/fuzz_hooks.py)
        return o

    def paid(o: dict, payment: str, want: int, what: str) -> None:
        expect(confirm(base, o["orderId"], payment, o["seats"]), want, what)
        o["paymentId"] = payment

    orders = [order(SEED_EVENT, seats[i * 2:i * 2 + 2]) for i in range(6)]  # A-1-1 .. A-2-2
    orders.append(order(SEED_EVENT, seats[20:30]))  # full: B-1-1 .. B-1-10
    orders.append(order(SEED_EVENT, []))  # empty
    paid(orders[0], "pi_seed", 200, "confirm an order")  # completed, A-1-1/2 SOLD
    late = order("fuzz-short", ["S-1-1"])
    empty_late = order("fuzz-short", [])
    time.sleep(1.2)  # both expire
    rival = order("fuzz-short", ["S-1-1"])  # takes the expired hold...
    paid(rival, "pi_rival", 200, "confirm the rival")  # ...and buys it
    paid(late, "pi_late", 409, "a late payment for a seat sold since")  # REFUND_DUE
    orders += [late, empty_late, rival]
    # Orders of their own for the Stripe route, so that its sales do not
    # leave confirm nothing to sell (A-2-3 .. A-2-8).
    stripe_orders = [order(SEED_EVENT, seats[12 + i * 2:14 + i * 2]) for i in range(3)]
    keep = ("orderId", "holdToken", "seats", "paymentId")
    return {"orders": [{k: o[k] for k in keep if k in o} for o in orders],
            "stripe_orders": [{k: o[k] for k in keep if k in o} for o in stripe_orders],
            "seats": seats + ["S-1-1", "S-1-2", "A-9-9", "nope"],
            "visitors": seed_visitors(base),
            "entries": seed_entries(base)}


def seed_visitors(base: str) -> list:
    """Visitors of an open queue, each with the token join gave it, so that
    visitor-status is fuzzed behind its authentication too."""
    event = "fuzz-queue"
    plan = {"name": "Queue", "holdSeconds": 600, "sections": [{"sectionId": "Q", "rows": [{"row": "1", "count": 5}]}]}
    expect(call(base, "PUT", f"/events/{event}", plan), 201, "create the queued event")
    opened = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
    expect(call(base, "PUT", f"/events/{event}/queue", {"opensAt": opened, "admitPerMinute": 60}), 200, "put a queue")
    visitors = []
    for _ in range(4):
        joined = expect(call(base, "POST", f"/events/{event}/queue/visitors", {}), 201, "join the queue")
        visitors.append({"eventId": event, "visitorId": joined["visitorId"], "visitorToken": joined["visitorToken"]})
    return visitors


def seed_entries(base: str) -> list:
    """Entries of an open waitlist, each with the token join gave it, so that
    entry-status and leave are fuzzed behind their authentication too."""
    event = "fuzz-waitlist"
    plan = {"name": "Waitlist", "holdSeconds": 600, "sections": [{"sectionId": "W", "rows": [{"row": "1", "count": 5}]}]}
    expect(call(base, "PUT", f"/events/{event}", plan), 201, "create the waitlisted event")
    expect(call(base, "PUT", f"/events/{event}/waitlist", {"opens": "now"}), 200, "open a waitlist")
    entries = []
    for i in range(4):
        buyer = expect(call(base, "POST", "/_dev/buyer-token", {"eventId": event, "buyerId": f"fuzz:{i}"}), 200,
                       "mint a buyer token")
        joined = expect(call(base, "POST", f"/events/{event}/waitlist/entries", {},
                             headers={"X-Buyer-Token": buyer["buyerToken"]}), 201, "join the waitlist")
        entries.append({"eventId": event, "entryId": joined["entryId"], "entryToken": joined["entryToken"]})
    return entries


def start_server(port: int, dynamodb_port: int, log_path: Path) -> subprocess.Popen:
    return dev_server.start(port, dynamodb_port, log_path, "fuzz", {
        "SWEEP_INTERVAL_SECONDS": os.environ.get("FUZZ_SWEEP_SECONDS", "5"),
        # Generated plans reach 100,000 seats: a short write budget
        # answers 202 quickly (the server finishes in the background).
        "CREATE_EVENT_BUDGET_MS": os.environ.get("FUZZ_CREATE_EVENT_BUDGET_MS", "1000"),
        "CONFIRM_SECRET": SECRET,
    })


stop_server = dev_server.stop


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-examples", type=int, default=int(os.environ.get("FUZZ_MAX_EXAMPLES", "25")),
                    help="test cases per operation and phase (schemathesis -n); default 25 or $FUZZ_MAX_EXAMPLES")
    ap.add_argument("--phases", default=os.environ.get("FUZZ_PHASES", "examples,coverage,fuzzing,stateful"))
    ap.add_argument("--workers", default=os.environ.get("FUZZ_WORKERS", "1"),
                    help="schemathesis workers; default 1: under several, CPython 3.11's non-thread-safe "
                         "ast.parse breaks hypothesis' lambda descriptions (runtime errors, not findings)")
    ap.add_argument("--seed", default=os.environ.get("FUZZ_SEED"), help="schemathesis --seed (random if unset)")
    ap.add_argument("--max-time", default=os.environ.get("FUZZ_MAX_TIME"), help="schemathesis --max-time, seconds")
    ap.add_argument("--min-requests", type=int, default=int(os.environ.get("FUZZ_MIN_REQUESTS", "0")),
                    help="fail if fewer requests than this were made")
    ap.add_argument("--checks", default=os.environ.get("FUZZ_CHECKS", CHECKS),
                    help=f"schemathesis checks (default {CHECKS})")
    ap.add_argument("--report-dir", default=None, help="keep schemathesis' reports (junit, ndjson) here")
    ap.add_argument("--write-doc", default=None, metavar="MD",
                    help="write the run's figures there, stamped with the commit (make fuzz-long: docs/FUZZ-RESULTS.md)")
    args = ap.parse_args()

    server = binary("seatclaim-dev")
    if not server.is_file():
        raise SystemExit(f"fuzz: {server} is missing; run `cargo build -p local --bin seatclaim-dev`")
    st = VENV_BIN / "st"
    if not st.is_file():
        raise SystemExit("fuzz: schemathesis is missing; run `make fuzz-tools`")

    work = Path(tempfile.mkdtemp(prefix="seatclaim-fuzz-"))
    port, dynamodb_port = free_ports(2)
    base = f"http://127.0.0.1:{port}"
    log_path = work / "server.log"
    started = time.monotonic()
    proc = start_server(port, dynamodb_port, log_path)
    try:
        status, schema = call(base, "GET", "/openapi.yaml")
        if status != 200 or not schema.startswith(b"openapi: 3.0.3"):
            raise SystemExit(f"fuzz: GET /openapi.yaml answered {status}")
        seeds = seed(base)
        (work / "seeds.json").write_text(json.dumps(seeds))
        stats_path = work / "stats.json"
        cmd = [str(st), "run", f"{base}/openapi.yaml", "--url", base,
               "--checks", args.checks, "--max-examples", str(args.max_examples),
               "--phases", args.phases, "--workers", str(args.workers),
               "--generation-database", "none", "--request-timeout", "30",
               "--suppress-health-check", "all", "--no-color", "--output-truncate", "true"]
        if args.seed:
            cmd += ["--seed", str(args.seed)]
        if args.max_time:
            cmd += ["--max-time", str(args.max_time)]
        if args.report_dir:
            cmd += ["--report", "junit,ndjson", "--report-dir", str(Path(args.report_dir).resolve())]
        env = dict(os.environ, SCHEMATHESIS_HOOKS=str(ROOT / "scripts" / "fuzz_hooks.py"),
                   FUZZ_SEEDS=str(work / "seeds.json"), FUZZ_STATS=str(stats_path), FUZZ_CONFIRM_SECRET=SECRET)
        print("fuzz: " + " ".join(cmd), flush=True)
        fuzz_started = time.monotonic()
        # In the scratch folder: schemathesis keeps its replay data (.schemathesis/) in the working directory.
        st_proc = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace")
        st_failures = 0
        unauthenticated = False
        for line in st_proc.stdout:
            sys.stdout.write(line)
            found = re.search(r"=+ (\d+) failures?\b", line)
            if found:
                st_failures = int(found.group(1))
            # An operation that only ever answered 401/403 was never
            # exercised behind its credentials: the seeds must reach it.
            unauthenticated |= "returned only 401/403" in line
        st_rc = st_proc.wait()
        sys.stdout.flush()
        fuzz_seconds = time.monotonic() - fuzz_started

        alive = proc.poll() is None
        answering = alive and call(base, "GET", f"/events/{SEED_EVENT}/seats")[0] == 200
        stats = json.loads(stats_path.read_text()) if stats_path.is_file() else {}
        if args.report_dir:
            Path(args.report_dir).mkdir(parents=True, exist_ok=True)
            (Path(args.report_dir) / "stats.json").write_text(json.dumps(stats, indent=2))
    finally:
        stop_server(proc)

    log_text = log_path.read_text(errors="replace")
    panics = log_text.count("panicked at")
    requests = stats.get("requests", 0)
    statuses = stats.get("statuses", {})
    server_errors = sum(v for k, v in statuses.items() if int(k) >= 500)
    failed = stats.get("failed_requests", 0)
    for op, counts in stats.get("by_operation", {}).items():
        print(f"fuzz:   {op:<42} {counts}")
    print(f"fuzz:   error codes: {stats.get('error_codes', {})}")
    print(f"fuzz:   signed confirms by kind: {stats.get('confirm_kinds', {})}")
    for e in stats.get("server_errors", [])[:10]:
        print(f"fuzz: 5xx: {e}")
    print(f"fuzz: {requests} requests in {fuzz_seconds:.1f} s ({time.monotonic() - started:.1f} s with start-up), "
          f"statuses {statuses}, {server_errors} 5xx, {stats.get('signed_confirms', 0)} signed confirms, "
          f"schemathesis exit {st_rc}, server {'alive' if alive else 'DEAD'}"
          f"{'' if answering or not alive else ' but not answering'}, {panics} panics logged")
    problems = []
    if st_rc != 0:
        problems.append(f"schemathesis reported failures (exit {st_rc})")
    if server_errors:
        problems.append(f"{server_errors} responses were 5xx")
    if not alive or not answering:
        problems.append("the server died or stopped answering")
    if panics:
        problems.append(f"{panics} panics in the server log {log_path}")
    if unauthenticated:
        problems.append("an operation answered only 401/403: seed it a credential (scripts/fuzz_hooks.py)")
    if requests < args.min_requests:
        problems.append(f"only {requests} requests, fewer than --min-requests {args.min_requests}")
    if problems:
        print("fuzz: FAILED: " + "; ".join(problems) + f" (server log: {log_path})")
    if args.write_doc:
        Path(args.write_doc).write_text(results_markdown(
            stats, fuzz_seconds, time.monotonic() - started, st_rc, alive and answering, panics, problems))
        print(f"fuzz: wrote {args.write_doc}")
    failed = max(failed, st_failures, server_errors, 1 if problems else 0)
    print(f"fuzz: {max(requests - failed, 0)} passed, {failed} failed")
    return 1 if problems else 0


def provenance():
    """The commit measured, and whether the tree had changes beside it."""
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"`{git('rev-parse', '--short=12', 'HEAD')}`, " + ("**tree modified**" if dirty else "clean tree")


def counts(d):
    return " · ".join(f"{k}: {v:,}" for k, v in d.items()) or "none"


def results_markdown(stats, fuzz_seconds, total_seconds, st_rc, answering, panics, problems):
    """The generated results page: every figure from this run's tallies."""
    statuses = stats.get("statuses", {})
    server_errors = sum(v for k, v in statuses.items() if int(k) >= 500)
    requests = stats.get("requests", 0)
    lines = [
        "# Fuzzing results (generated by `make fuzz-long`; do not edit)",
        "",
        f"- code: {provenance()}; date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- command: `{' '.join(['scripts/fuzz_api.py', *sys.argv[1:]])}`",
        f"- verdict: **{'passed' if not problems else 'FAILED: ' + '; '.join(problems)}**",
        "",
        "| | |",
        "|---|---|",
        f"| requests | {requests:,} (schemathesis exit {st_rc}) |",
        f"| duration | {fuzz_seconds:.0f} s of fuzzing, {total_seconds:.0f} s with start-up and seeding |",
        f"| rate | {requests / max(fuzz_seconds, 1e-9):.1f} requests/s (the fuzzer is the bottleneck) |",
        f"| 5xx responses | {server_errors} ({panics} panics logged; server "
        f"{'alive and answering' if answering else 'NOT answering'} afterwards) |",
        f"| statuses | {counts(statuses)} |",
        f"| signed confirms | {stats.get('signed_confirms', 0):,}: {counts(stats.get('confirm_kinds', {}))} |",
        "",
        "## Error codes seen",
        "",
        counts(stats.get("error_codes", {})),
        "",
        "## Per operation",
        "",
        "| operation | statuses |",
        "|---|---|",
    ]
    lines += [f"| `{op}` | {counts(c)} |" for op, c in stats.get("by_operation", {}).items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
