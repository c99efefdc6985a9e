#!/usr/bin/env python3
"""Cold start and footprint of every Lambda binary.

Every function's release binary runs as `bootstrap` under the real Lambda
Runtime Interface Emulator shipped in the SAM CLI package (what `sam local
invoke` runs inside its container), against DynamoDB Local started by the
dev server. For each function, N times: exec the RIE, send the function's
events/ file (with a real order, token and event), and time exec -> first
answer; the RIE's own REPORT line gives the INIT duration; VmHWM of the
bootstrap process gives its peak RSS. Side by side: the same claim as
get-seat in Python/boto3 (scripts/python_get_seat/handler.py) run through
awslambdaric under the same RIE, plus warm CPU time per invocation of both.

    .tools/venv/bin/python scripts/bench_cold_start.py            # N=20, writes docs/
    .tools/venv/bin/python scripts/bench_cold_start.py --smoke    # 2 runs, writes nothing

`make bench` runs it as its last scenario: seatclaim-bench serves a fresh
table on its own (warm) DynamoDB Local and passes --server, --ddb-endpoint,
--table, --bin-dir (its own target folder) and --fragment (the summary for
docs/BENCHMARKS.md).

Stdlib only; installs awslambdaric into .tools/venv if it is missing. Run on
its own, builds the release binaries and the dev server if they are missing
(`--build` rebuilds, a no-op when they are fresh); with --bin-dir, the
binaries must be there. Exits non-zero if an invocation
failed or answered 5xx; a missed size/latency target is reported, not fatal.
"""
import argparse
import datetime
import hashlib
import http.client
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from pathlib import Path

from cargo_target import target_dir
from dev_keys import (DEV_BUYER_ISSUER, dev_admission_keys, dev_buyer_keys, dev_draw_secret, dev_stripe_secret,
                      dev_hold_token_keys)
from ports import free_ports
from stripe_event import resign_stripe_event
from webhook_sign import DEV_SECRET, confirm_body, resign_confirm_event, webhook_headers

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".tools" / "venv"
VENV_PYTHON = VENV / "bin" / "python"
PY_HANDLER_DIR = ROOT / "scripts" / "python_get_seat"
DOC_MD = ROOT / "docs" / "BENCH-COLD-START.md"
DOC_JSON = ROOT / "docs" / "bench-cold-start.json"

# Every function's binary (functions/src/bin/: one per entry of
# shared::routes, a test holds the two together), but those listed here.
NOT_TIMED = {"publish-events": "it needs an EventBridge bus, which the emulator run has no stand-in for"}
FUNCTIONS = sorted(p.stem for p in (ROOT / "functions" / "src" / "bin").glob("*.rs") if p.stem not in NOT_TIMED)
# The queue's, on an event of their own (a queue on EVENT would make
# create-order ask for an admission).
QUEUE_FUNCTIONS = ("queue-admin", "get-queue", "queue-visitors", "admission-keys", "admit-visitors")
# events/ has a file per route: a function of several routes is timed on
# this route's (a test holds each to its function's routes).
TIMED_ROUTE = {"queue-admin": "put-queue", "get-queue": "get-queue", "queue-visitors": "join-queue", "waitlist-admin": "put-waitlist", "waitlist-entries": "entry-status", "order-returns": "withdraw-return"}
# The waitlist's, on EVENT, its waitlist put (armed) before the runs.
WAITLIST_FUNCTIONS = ("waitlist-admin", "get-waitlist")
QUEUE_EVENT = "cold-queue"
# waitlist-entries reads one entry, joined before the runs on an event of its
# own (an open waitlist would refuse EVENT's orders).
ENTRY_EVENT = "cold-waitlist"
EXAMPLE_ENTRY = "EXAMPLE-ENTRY"
EXAMPLE_ENTRY_TOKEN = "EXAMPLE-ENTRY-TOKEN"
PYTHON_FN = "get-seat (python)"
EXAMPLE_ORDER = "3d2d2b34abc1b57393e6-3f1c2a9e7b4d4c8e9a1f0d2b6e5c7a81"
EXAMPLE_TOKEN = "gala-2026~1795300000000~9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08~5f65066f0b45eff79cacd866fb294ebfd2a990a3787cab5eff0d63f9668a0d28"
EXAMPLE_EVENT = "gala-2026"
EXAMPLE_SEAT = "A-1-7"
TABLE = "seatclaim-bench-cold"
EVENT = "cold"
# Every function answers 200 (a scheduled or stream function: its
# invocation) but those that create what the sample asks for.
CREATED = {"create-event", "create-order", "queue-visitors"}
EXPECTED = {fn: 201 if fn in CREATED else 200 for fn in FUNCTIONS + [PYTHON_FN]}
SEATS_PER_ORDER = 9  # below MAX_SEATS_PER_ORDER (10)

# The targets. MB = MiB here (the stricter reading for size).
MIB = 1024 * 1024
TARGET_INIT_MS = 30.0
TARGET_BINARY_BYTES = 8 * MIB
TARGET_RSS_BYTES = 32 * MIB

CLK_TCK = os.sysconf("SC_CLK_TCK")
INIT_RE = re.compile(r"Init Duration:\s*([0-9.]+)\s*ms")
INIT_REPORT_RE = re.compile(r"INIT REPORT\(durationMs:\s*([0-9.]+)\)")
READY_TIMEOUT = 90


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def pct(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    xs = sorted(values)
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"p50": pct(values, 50), "p90": pct(values, 90), "max": max(values), "min": min(values),
            "mean": sum(values) / len(values), "n": len(values)}


# ---------------------------------------------------------------- setup


def rie_path():
    try:
        import samcli  # noqa: PLC0415 (the venv's SAM CLI)
        path = Path(samcli.__file__).parent / "local" / "rapid" / "aws-lambda-rie-x86_64"
    except ImportError:
        found = sorted(VENV.glob("lib/python3*/site-packages/samcli/local/rapid/aws-lambda-rie-x86_64"))
        path = found[0] if found else None
    if not path or not path.exists():
        sys.exit("the Runtime Interface Emulator was not found: run `make python-tools` (aws-sam-cli in .tools/venv)")
    return path


def ensure_awslambdaric():
    check = subprocess.run([str(VENV_PYTHON), "-c", "import awslambdaric, boto3"], capture_output=True)
    if check.returncode == 0:
        return
    log("installing awslambdaric into .tools/venv")
    subprocess.run([str(VENV_PYTHON), "-m", "pip", "install", "--quiet", "awslambdaric"], check=True)


def ensure_binaries(functions, force, bin_dir, given, external_server):
    missing = [fn for fn in functions if not (bin_dir / fn).exists()]
    if given and missing:
        sys.exit(f"no {', '.join(missing)} in {bin_dir} (--bin-dir): build them first")
    if not given and functions and (force or missing):
        cmd = ["cargo", "build", "--release", "--bins", "-p", "functions"]
        log(f"building release binaries ({'missing: ' + ', '.join(missing) if missing else '--build'}); "
            "fat LTO takes several minutes: " + " ".join(cmd))
        subprocess.run(cmd, cwd=ROOT, check=True)
    if external_server:
        return
    dev = target_dir() / "debug" / "seatclaim-dev"
    if force or not dev.exists():
        cmd = ["cargo", "build", "-p", "local", "--bin", "seatclaim-dev"]
        log("building the dev server: " + " ".join(cmd))
        subprocess.run(cmd, cwd=ROOT, check=True)


def stale_binaries(functions, bin_dir):
    """Sources edited after the oldest binary was built (the build is only
    run when a binary is missing, or with --build)."""
    if not functions:
        return []
    built = min((bin_dir / fn).stat().st_mtime for fn in functions)
    sources = [ROOT / "Cargo.lock", ROOT / "Cargo.toml"]
    for top in ["shared", "functions"]:
        sources += (ROOT / top).rglob("*.rs")
        sources.append(ROOT / top / "Cargo.toml")
    return sorted(str(p.relative_to(ROOT)) for p in sources if p.exists() and p.stat().st_mtime > built)


def drain(stream, sink, ready=None, marker=None):
    """Reads a child's output to the end (so it never blocks on a full pipe)."""
    for line in iter(stream.readline, ""):
        sink.append((time.perf_counter(), line.rstrip("\n")))
        if ready is not None and marker in line:
            ready.set()
    stream.close()


class DevServer:
    """<cargo target dir>/debug/seatclaim-dev: DynamoDB Local + the HTTP API, for set-up."""

    def __init__(self):
        self.port, self.ddb_port = free_ports(2)
        self.ddb_endpoint, self.table = f"http://127.0.0.1:{self.ddb_port}", TABLE
        env = dict(os.environ, PORT=str(self.port), DYNAMODB_LOCAL_PORT=str(self.ddb_port), TABLE_NAME=TABLE,
                   CONFIRM_SECRET=DEV_SECRET, SWEEP_INTERVAL_SECONDS="3600", RUST_LOG="warn")
        self.proc = subprocess.Popen([str(target_dir() / "debug" / "seatclaim-dev")], env=env, cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = []
        self.entry = None  # waitlist-entries' (joined_entry)
        ready = threading.Event()
        threading.Thread(target=drain, args=(self.proc.stdout, self.output, ready, "listening on"),
                         daemon=True).start()
        deadline = time.time() + READY_TIMEOUT
        while not ready.wait(0.2):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                tail = "\n".join(l for _, l in self.output[-20:])
                sys.exit(f"the dev server did not start:\n{tail}")

    @classmethod
    def external(cls, url, ddb_endpoint, table):
        """A server someone else runs (seatclaim-bench), on `table`."""
        server = cls.__new__(cls)
        server.port = int(url.rstrip("/").rsplit(":", 1)[1])
        server.ddb_endpoint, server.table, server.proc, server.output = ddb_endpoint, table, None, []
        return server

    def request(self, method, path, body=None, token=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"content-type": "application/json", **(headers or {})}
        if token:
            headers["authorization"] = f"Bearer {token}"
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, json.loads(data or b"null")

    def must(self, want, method, path, body=None, token=None, headers=None):
        status, reply = self.request(method, path, body, token, headers)
        if status != want:
            sys.exit(f"set-up call {method} {path} answered {status}, wanted {want}: {reply}")
        return reply

    def order(self):
        reply = self.must(201, "POST", f"/events/{EVENT}/orders", {})
        return reply["orderId"], reply["holdToken"]

    def joined_entry(self):
        """An entry of ENTRY_EVENT's open waitlist: its id and token."""
        self.must(201, "PUT", f"/events/{ENTRY_EVENT}",
                  {"name": "Cold waitlist", "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 2}]}]})
        self.must(200, "PUT", f"/events/{ENTRY_EVENT}/waitlist", {"opens": "now"})
        buyer = self.must(200, "POST", "/_dev/buyer-token", {"eventId": ENTRY_EVENT, "buyerId": "user:cold"})
        entry = self.must(201, "POST", f"/events/{ENTRY_EVENT}/waitlist/entries", {},
                          headers={"x-buyer-token": buyer["buyerToken"]})
        return entry["entryId"], entry["entryToken"]

    def hold(self, order, token, seat):
        self.must(200, "POST", f"/orders/{order}/seats/{seat}", token=token)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # stops its DynamoDB Local too
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def warm_up_store(server, seats, rounds=5):
    """Runs every operation the functions use a few times through the dev
    server first: DynamoDB Local is a JVM, and its first transactions (class
    loading, JIT) are several times slower than the rest, which would land
    on whichever function happens to go first."""
    for i in range(rounds):
        order, token = server.order()
        first, second = seats.seat(), seats.seat()
        server.hold(order, token, first)
        server.hold(order, token, second)
        server.must(200, "DELETE", f"/orders/{order}/seats/{second}", token=token)
        server.must(200, "GET", f"/orders/{order}", token=token)
        server.must(200, "GET", f"/events/{EVENT}/seats?section=A")
        body = confirm_body(order, f"pi_warmup_{i}", [first])
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("POST", f"/orders/{order}/confirm", body=body,
                     headers={"content-type": "application/json", **webhook_headers(body, DEV_SECRET)})
        resp = conn.getresponse()
        resp.read()
        conn.close()
        if resp.status != 200:
            sys.exit(f"warm-up confirm answered {resp.status}")


# Section A is best-available's (events/best-available.json): rows short
# enough to read within its bound of store requests (docs/API.md,
# "best-available's bounds"). The seats handed out one by one are section
# B's, one long row, so best-available never takes one of them.
SEATS_PER_ROW = 50


class Seats:
    """Hands out fresh seats of section B, and orders with room."""

    def __init__(self, server):
        self.server, self.next_seat, self.current, self.used = server, 1, None, SEATS_PER_ORDER

    def seat(self):
        seat = f"B-1-{self.next_seat}"
        self.next_seat += 1
        return seat

    def order_with_room(self):
        if self.used >= SEATS_PER_ORDER:
            self.current, self.used = self.server.order(), 0
        self.used += 1
        return self.current


# ---------------------------------------------------------------- events


def event_payload(fn, order=None, token=None, seat=None, event_id=EVENT, entry=None):
    name = "get-seat" if fn == PYTHON_FN else fn
    text = (ROOT / "events" / f"{TIMED_ROUTE.get(name, name)}.json").read_text()
    if entry:
        # The token's name first: it holds the entry's.
        text = text.replace(EXAMPLE_ENTRY_TOKEN, entry[1]).replace(EXAMPLE_ENTRY, entry[0])
    if token:
        text = text.replace(EXAMPLE_TOKEN, token)
    if order:
        text = text.replace(EXAMPLE_ORDER, order)
    text = text.replace(EXAMPLE_EVENT, event_id)
    event = json.loads(text)
    if seat and name == "confirm":
        # Signed now, naming this order and its seat; a payment id of its own
        # (one payment id used by two orders is 409 payment-reused).
        resign_confirm_event(event, [seat], payment_id=f"pi_cold_{uuid.uuid4().hex[:20]}")
    elif seat and name == "stripe-payment":
        # A session of its own paying for this order's seat, signed now.
        stripe_event = json.loads(event["body"])
        session = stripe_event["data"]["object"]
        session["id"] = f"cs_test_cold{uuid.uuid4().hex}"
        session["metadata"]["seatclaimSeats"] = json.dumps([seat])
        event["body"] = json.dumps(stripe_event, separators=(",", ":"))
        resign_stripe_event(event)
    elif seat:
        event["rawPath"] = event["rawPath"].replace(f"/seats/{EXAMPLE_SEAT}", f"/seats/{seat}")
        event["requestContext"]["http"]["path"] = event["rawPath"]
        event["pathParameters"]["seatId"] = seat
    return json.dumps(event).encode()


def prepare(fn, seats, run_id, i, shared_order):
    """The event for one cold start of `fn`, after any set-up it needs, so
    that the function does its real work and answers its success code."""
    if fn in QUEUE_FUNCTIONS:
        return event_payload(fn, event_id=QUEUE_EVENT)
    if fn == "waitlist-entries":
        return event_payload(fn, event_id=ENTRY_EVENT, entry=seats.server.entry)
    if fn == "create-event":
        return event_payload(fn, event_id=f"cold-ce-{run_id}-{i}")
    if fn == "get-order":
        return event_payload(fn, *shared_order)
    if fn in ("extend-order", "cancel-order", "best-available", "hold-ga", "order-returns"):
        # A fresh order per run (order-returns withdraws a seat it never
        # listed: it reads the order, its listings and the waitlist).
        order, token = seats.server.order()
        return event_payload(fn, order, token)
    if fn in ("get-seat", PYTHON_FN, "drop-seat", "confirm", "stripe-payment"):
        order, token = seats.server.order()  # a fresh order per run
        seat = seats.seat()
        if fn not in ("get-seat", PYTHON_FN):
            seats.server.hold(order, token, seat)
        return event_payload(fn, order, token, seat)
    # Any other function: its events/ sample as it is, on the example event.
    return event_payload(fn)


# ---------------------------------------------------------------- process helpers


def children(pid):
    kids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rfind(")") + 2:].split()[1]) == pid:
            kids.append(int(entry.name))
    return kids


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        for kid in children(todo.pop()):
            out.append(kid)
            todo.append(kid)
    return out


def status_kb(pid, field):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return None


def cpu_ticks(pid):
    """utime+stime of the whole process (dead threads included), in ticks."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def cpu_ns(pid):
    """On-CPU time of the process's live threads (schedstat), in ns."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


class Emulator:
    """One RIE process with one bootstrap; a fresh one is a cold start."""

    def __init__(self, rie, command, cwd, env):
        self.port, self.api_port = free_ports(2)
        self.output = []
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [str(rie), "--runtime-interface-emulator-address", f"127.0.0.1:{self.port}",
             "--runtime-api-address", f"127.0.0.1:{self.api_port}", *command],
            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.reader = threading.Thread(target=drain, args=(self.proc.stdout, self.output), daemon=True)
        self.reader.start()

    def runtime_api_refused(self):
        """Whether the bootstrap could not connect to this RIE's runtime API."""
        return any("ConnectionRefused" in line and f"127.0.0.1:{self.api_port}" in line
                   for _, line in self.output)

    def invoke(self, payload, timeout=60):
        """POSTs one event; before the RIE listens, retries the connection
        (nothing is sent until it accepts, so requests never overlap)."""
        deadline = time.perf_counter() + timeout
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
                break
            except (ConnectionRefusedError, OSError):
                if self.proc.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError("the emulator exited or never listened: " + self.tail())
                time.sleep(0.0005)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.sock = sock
        conn.request("POST", "/2015-03-31/functions/function/invocations", body=payload,
                     headers={"content-type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        answered = time.perf_counter()
        conn.close()
        return answered, resp.status, data

    def bootstrap_pid(self):
        kids = children(self.proc.pid)
        return kids[0] if kids else None

    def init_durations(self, wait=2.0):
        """(INIT REPORT durationMs, REPORT line's `Init Duration`) in ms.
        The first is the real INIT (runtime exec -> first /next); the REPORT
        line's Init Duration of this RIE build is not (0.02-2 ms for any
        runtime, Python included)."""
        deadline = time.perf_counter() + wait
        while True:
            lines = [l for _, l in list(self.output)]
            init = next((float(m.group(1)) for l in lines if (m := INIT_REPORT_RE.search(l))), None)
            report = next((float(m.group(1)) for l in lines if (m := INIT_RE.search(l))), None)
            if (init is not None and report is not None) or time.perf_counter() > deadline:
                return init, report
            time.sleep(0.005)

    def tail(self, n=15):
        return "\n".join(l for _, l in self.output[-n:])

    def stop(self):
        for pid in reversed(descendants(self.proc.pid)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.reader.join(timeout=5)


def answer_status(fn, http_status, data):
    """The function's own status: statusCode of an HTTP API reply; 200 for
    expire-holds' and project-seat-map's plain JSON; None if the RIE
    answered with an error."""
    try:
        reply = json.loads(data)
    except ValueError:
        return None, data[:200].decode(errors="replace")
    if http_status != 200 or not isinstance(reply, dict):
        return None, str(reply)[:200]
    if "statusCode" in reply:
        return reply["statusCode"], (reply.get("body") or "")[:160]
    if fn == "expire-holds" and "expiredOrders" in reply:
        return 200, json.dumps(reply)
    if fn == "project-seat-map" and reply.get("batchItemFailures") == []:
        return 200, json.dumps(reply)
    if fn in ("admit-visitors", "offer-waitlists") and reply.get("ticks", 0) >= 1:
        return 200, json.dumps(reply)
    return None, str(reply)[:200]


# ---------------------------------------------------------------- the runs


def lambda_env(server):
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "TZ") if k in os.environ}
    signing, verify = dev_admission_keys()
    return dict(keep, TABLE_NAME=server.table, AWS_ENDPOINT_URL_DYNAMODB=server.ddb_endpoint,
                AWS_REGION="us-east-1", AWS_DEFAULT_REGION="us-east-1", AWS_ACCESS_KEY_ID="local",
                AWS_SECRET_ACCESS_KEY="local", CONFIRM_SECRET=DEV_SECRET, RUST_LOG="info",
                ADMISSION_SIGNING_KEYS=signing, ADMISSION_VERIFY_KEYS=verify,
                HOLD_TOKEN_KEYS=dev_hold_token_keys(), DRAW_SECRET=dev_draw_secret(),
                STRIPE_WEBHOOK_SECRET=dev_stripe_secret(),
                BUYER_VERIFY_KEYS=dev_buyer_keys()[1], BUYER_ISSUER=DEV_BUYER_ISSUER,
                # A local run of the development secrets (docs/OPERATIONS.md).
                SEATCLAIM_ALLOW_DEV_SECRETS="1",
                # One second of ticks, not the scheduled run's minute: its
                # first answer then says when the run ended.
                ADMITTER_RUN_SECONDS="1", OFFERER_RUN_SECONDS="1",
                PYTHONDONTWRITEBYTECODE="1", LAMBDA_TASK_ROOT=str(PY_HANDLER_DIR))


def command_for(fn, workdir):
    if fn == PYTHON_FN:
        return [str(VENV_PYTHON), "-m", "awslambdaric", "handler.handler"], PY_HANDLER_DIR
    return [str(workdir / fn / "bootstrap")], workdir / fn


# Fresh emulators a cold start may take when the harness, not the function,
# failed: the bootstrap was refused by its own RIE's runtime API (the port
# the harness picked was taken meanwhile, or not yet listening), so no
# function code ran. Each retry is counted in the sample.
HARNESS_ATTEMPTS = 3


def cold_start(rie, fn, payload, workdir, env):
    for attempt in range(HARNESS_ATTEMPTS):
        sample, harness_failed = cold_start_once(rie, fn, payload, workdir, env)
        if not harness_failed:
            break
    if attempt:
        sample["harness_retries"] = attempt
    return sample


def cold_start_once(rie, fn, payload, workdir, env):
    """One cold start, and whether it failed before the function's code
    could run because the runtime API refused the bootstrap."""
    command, cwd = command_for(fn, workdir)
    emu = Emulator(rie, command, cwd, env)
    try:
        answered, http_status, data = emu.invoke(payload)
        elapsed_ms = (answered - emu.started) * 1000
        pid = emu.bootstrap_pid()
        hwm = status_kb(pid, "VmHWM") if pid else None
        init_ms, report_init_ms = emu.init_durations()
        status, body = answer_status(fn, http_status, data)
        sample = {"exec_to_answer_ms": round(elapsed_ms, 3), "init_ms": init_ms, "report_init_ms": report_init_ms,
                  "peak_rss_bytes": hwm, "status": status, "body": body}
        if status is None or status >= 500:
            sample["rie_http_status"] = http_status
            sample["rie_output"] = emu.tail(25)
        return sample, status is None and emu.runtime_api_refused()
    except Exception as err:  # noqa: BLE001 (recorded, reported, fails the run)
        return {"exec_to_answer_ms": None, "init_ms": None, "report_init_ms": None, "peak_rss_bytes": None,
                "status": None, "body": f"{type(err).__name__}: {err}", "rie_output": emu.tail(25)}, False
    finally:
        emu.stop()


def warm_cpu(rie, fns, seats, calls, workdir, env):
    """CPU time of each function process per warm get-seat invocation (each
    claims a fresh seat), after one cold invocation. The functions' calls
    alternate (one request at a time in all), so both see the same load."""
    payloads = {fn: [] for fn in fns}
    for _ in range(calls + 1):
        for fn in fns:
            order, token = seats.order_with_room()
            payloads[fn].append(event_payload(fn, order, token, seats.seat()))
    emus, pids, ticks0, ns_prev = {}, {}, {}, {}
    per_call_ns = {fn: [] for fn in fns}
    latency_ms = {fn: [] for fn in fns}
    statuses = {fn: [] for fn in fns}
    try:
        for fn in fns:
            command, cwd = command_for(fn, workdir)
            emus[fn] = Emulator(rie, command, cwd, env)
            emus[fn].invoke(payloads[fn][0])
            pids[fn] = emus[fn].bootstrap_pid()
            ticks0[fn], ns_prev[fn] = cpu_ticks(pids[fn]), cpu_ns(pids[fn])
        for k in range(1, calls + 1):
            for fn in fns:
                sent = time.perf_counter()
                answered, http_status, data = emus[fn].invoke(payloads[fn][k])
                latency_ms[fn].append((answered - sent) * 1000)
                statuses[fn].append(answer_status(fn, http_status, data)[0])
                # Chained readings: the runtime's work after the answer (its
                # next /next poll) lands in the following call, none is lost.
                ns = cpu_ns(pids[fn])
                per_call_ns[fn].append(ns - ns_prev[fn])
                ns_prev[fn] = ns
        out = {}
        for fn in fns:
            pid = pids[fn]
            ticks = cpu_ticks(pid) - ticks0[fn]
            out[fn] = {
                "calls": calls,
                "cpu_ms_per_call_mean_stat": round(ticks / CLK_TCK * 1000 / calls, 3),
                "cpu_ms_per_call_schedstat": summary([n / 1e6 for n in per_call_ns[fn] if n >= 0]),
                "latency_ms": summary(latency_ms[fn]),
                "rss_bytes_after": status_kb(pid, "VmRSS"),
                "peak_rss_bytes": status_kb(pid, "VmHWM"),
                "statuses": sorted(set(map(str, statuses[fn]))),
                "ok": all(st == EXPECTED[fn] for st in statuses[fn]),
            }
        return out
    finally:
        for emu in emus.values():
            emu.stop()


def machine():
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = status = None
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem = round(int(line.split()[1]) / MIB, 1)
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": mem, "kernel": platform.release(),
            "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3], "status": status}


def versions(rie):
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return None
    sam = out([str(VENV_PYTHON), "-c", "import samcli; print(samcli.__version__)"])
    ric = out([str(VENV_PYTHON), "-c", "import importlib.metadata as m; print(m.version('awslambdaric'))"])
    boto = out([str(VENV_PYTHON), "-c", "import boto3; print(boto3.__version__)"])
    head = out(["git", "rev-parse", "--short", "HEAD"])
    dirty = out(["git", "status", "--porcelain", "--untracked-files=no"])
    return {"rustc": out(["rustc", "-V"]), "aws-sam-cli": sam,
            "rie_sha256": hashlib.sha256(Path(rie).read_bytes()).hexdigest()[:16],
            "python": out([str(VENV_PYTHON), "-V"]), "awslambdaric": ric, "boto3": boto,
            "git": f"{head}{' (dirty worktree)' if dirty else ''}"}


# ---------------------------------------------------------------- report


def mb(n):
    return f"{n / MIB:.2f}" if n is not None else "—"


def ms(s, key):
    return f"{s[key]:.1f}" if s else "—"


def verdict(ok):
    return "met" if ok else "**not met**"


def init_verdict(r):
    if not r["targets"]["init"]:
        return "**not met** (p50)"
    if r["init_p90_within_target"]:
        return "met (p50 and p90)"
    return f"met on p50; p90 {r['init_ms']['p90']:.1f} ms is not"


def render_method(result):
    """The bullet list that says how the figures were taken."""
    meta = result["meta"]
    return [
        f"- date: {meta['date']}",
        f"- machine: {meta['machine']['cpu']}, {meta['machine']['cores']} cores, {meta['machine']['mem_gib']} GiB, "
        f"Linux {meta['machine']['kernel']}, load average at start {' '.join(meta['machine']['loadavg_at_start'])} "
        "(shared sandbox, other work running)",
        f"- command: `{meta['command']}` ({meta['duration_s']:.0f} s)",
        f"- code: git {meta['versions']['git']}, {meta['versions']['rustc']}, {meta['build']}; x86_64",
        "- binaries built: " + (max(meta["binaries_built"].values()) if meta["binaries_built"] else "—")
        + stale_note(meta),
        f"- emulator: aws-lambda-rie-x86_64 from aws-sam-cli {meta['versions']['aws-sam-cli']} "
        f"(sha256 {meta['versions']['rie_sha256']}…), no container; DynamoDB Local via "
        + ("seatclaim-bench's own server" if meta.get("external_server") else "the dev server"),
        f"- {meta['runs']} cold starts per function; a cold start is a fresh RIE process whose first "
        "invocation starts the bootstrap (the RIE inits lazily), so **exec→answer** = RIE start + "
        "bootstrap exec + INIT + the first invocation's DynamoDB round trip(s); **INIT** is the RIE's "
        "`INIT REPORT(durationMs)` (bootstrap exec → its first `/next`; the `Init Duration` on this RIE "
        "build's REPORT line is not the init phase, 0.02–2 ms whatever the runtime, and is ignored); "
        "DynamoDB Local is warmed up first (JIT). **peak RSS** is VmHWM of the bootstrap "
        "process after the first answer (max over runs). Binary files are in the page cache (no disk-cold "
        "reads), as on a warm Lambda host.",
        f"- targets: INIT ≤ {TARGET_INIT_MS:.0f} ms (judged on p50; p90 shown, the tail on this shared "
        f"{os.cpu_count()}-core machine is other work's noise), binary ≤ 8 MiB "
        f"({TARGET_BINARY_BYTES:,} bytes; judged on the binary, not the zip), peak RSS ≤ 32 MiB. "
        "zip = the deployment package (deflate level 9), what Lambda downloads.",
        deployed_caveat(),
    ]


# Lambda gives a function CPU in proportion to its memory, one vCPU at
# 1,769 MB (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
MB_PER_VCPU = 1769


def deployed_caveat():
    """What this machine is not: the deployed architecture and CPU share,
    read from template.yaml's Globals."""
    template = (ROOT / "template.yaml").read_text()
    globals_part = template.split("\nResources:", 1)[0]
    memory = re.search(r"^\s+MemorySize:\s*(\d+)", globals_part, re.M)
    arch = re.search(r"^\s+Architectures:\s*\n\s+-\s*(\S+)", globals_part, re.M)
    memory_mb = int(memory.group(1)) if memory else None
    share = f"{memory_mb / MB_PER_VCPU:.2f} of a vCPU" if memory_mb else "an unknown share of a vCPU"
    return (
        f"- **caveat, what these figures are not**: measured on {platform.machine()} with every core of the "
        f"machine free to the bootstrap, under the RIE, binaries in the page cache. The deployed build is "
        f"**{arch.group(1) if arch else 'unknown'}** (template.yaml's Globals), and a {memory_mb or '?'} MB "
        f"function gets about **{share}** (Lambda allocates CPU in proportion to memory, one vCPU at "
        f"{MB_PER_VCPU:,} MB), so INIT and exec→answer on AWS may be several times these. No arm64 figure: "
        "qemu-user (Debian has it) would time its own translation of every instruction, many times slower "
        "than a Graviton core, not arm64; and the RIE the script drives is x86_64. Read these as relative "
        "figures (Rust against Python on one machine), not as AWS's."
    )


def stale_note(meta):
    """Sources newer than the oldest binary, by mtime. Under `make bench`
    (--server) cargo has just built the binaries and judged them fresh by
    content, so a newer file there is an edit that changes no binary (a
    comment in Cargo.toml, say); on its own, the script doesn't build."""
    stale = meta["stale_sources"]
    if not stale:
        return "; no source newer than them"
    names = ", ".join(stale[:5]) + (", …" if len(stale) > 5 else "")
    if meta.get("external_server"):
        return (f"; newer by mtime: {names} (cargo, run by `make bench` just before, "
                "found nothing in them that changes a binary)")
    return f"; **{len(stale)} source files changed since: {names}** (run with --build)"


def render_tables(result, h="##"):
    """The tables and the verdict, under headings of level `h`."""
    fns = result["functions"]
    lines = [
        f"{h} Rust functions",
        "",
        "| function | binary bytes | binary MiB | zip MiB | exec→answer p50 / p90 / max ms | INIT p50 / p90 / max ms "
        "| peak RSS MiB | status | INIT ≤ 30 ms | binary ≤ 8 MiB | RSS ≤ 32 MiB |",
        "|---|---:|---:|---:|---|---|---:|---|---|---|---|",
    ]
    for fn in FUNCTIONS + [PYTHON_FN]:
        r = fns.get(fn)
        if not r:
            continue
        if fn == PYTHON_FN:
            lines += ["", f"{h} Python/boto3 get-seat, same claim, same RIE (awslambdaric)", "",
                      "| function | code bytes | binary MiB | zip MiB | exec→answer p50 / p90 / max ms | INIT p50 / p90 / max ms "
                      "| peak RSS MiB | status | INIT ≤ 30 ms | binary ≤ 8 MiB | RSS ≤ 32 MiB |",
                      "|---|---:|---:|---:|---|---|---:|---|---|---|---|"]
        e, i = r["exec_to_answer_ms"], r["init_ms"]
        size = r["binary_bytes"]
        statuses = ", ".join(f"{k}×{v}" for k, v in sorted(r["status_counts"].items()))
        size_ok = "n/a (handler.py; boto3 comes with the runtime)" if fn == PYTHON_FN else verdict(
            r["targets"]["binary"])
        lines.append(
            f"| {fn} | {size:,} | {'—' if fn == PYTHON_FN else mb(size)} | {mb(r.get('zip_bytes'))} "
            f"| {ms(e, 'p50')} / {ms(e, 'p90')} / {ms(e, 'max')} | {ms(i, 'p50')} / {ms(i, 'p90')} / {ms(i, 'max')} "
            f"| {mb(r['peak_rss_bytes'])} | {statuses} | {init_verdict(r)} | {size_ok} "
            f"| {verdict(r['targets']['rss'])} |")
    warm = result.get("warm") or {}
    if warm:
        lines += ["", f"{h} Warm invocations: CPU time of the function process per get-seat call", "",
                  f"Each call claims a fresh seat (one `TransactWriteItems`), {next(iter(warm.values()))['calls']} "
                  "calls after one cold call, one request at a time. CPU = utime+stime of the function "
                  "process (whole process, /proc/PID/stat, mean; tick = "
                  f"{1000 // CLK_TCK} ms) and per-call on-CPU time of its threads (/proc/PID/task/*/schedstat, ns). "
                  "The RIE's own CPU is not counted.",
                  "",
                  "| function | CPU ms/call (stat, mean) | CPU ms/call (schedstat) p50 / p90 / max | latency ms p50 / p90 / max "
                  "| RSS after MiB | status |",
                  "|---|---:|---|---|---:|---|"]
        for fn, w in warm.items():
            c, l = w["cpu_ms_per_call_schedstat"], w["latency_ms"]
            lines.append(
                f"| {fn} | {w['cpu_ms_per_call_mean_stat']:.2f} | {c['p50']:.2f} / {c['p90']:.2f} / {c['max']:.2f} "
                f"| {l['p50']:.1f} / {l['p90']:.1f} / {l['max']:.1f} | {mb(w['rss_bytes_after'])} "
                f"| {', '.join(w['statuses'])} |")
    return lines + [""] + render_verdict(result, h)


def render_verdict(result, h="##"):
    """Whether every function met its targets, under a heading of level `h`."""
    fns = result["functions"]
    missed = [fn for fn in FUNCTIONS if fn in fns and not all(fns[fn]["targets"].values())]
    lines = [f"{h} Verdict", ""]
    if missed:
        for fn in missed:
            t = fns[fn]["targets"]
            lines.append(f"- {fn}: not met: " + ", ".join(k for k, ok in t.items() if not ok))
    else:
        lines.append("- every Rust function answered its success code on every cold start and "
                     "meets all three targets.")
    if result["failures"]:
        lines.append(f"- **missed**: {len(result['failures'])} invocations did not answer their "
                     "success code (see the JSON)")
    return lines


def render(result):
    lines = ["# Cold start and footprint", ""] + render_method(result) + [""]
    lines += render_tables(result) + ["", f"Raw samples: `{DOC_JSON.relative_to(ROOT)}`."]
    return "\n".join(lines) + "\n"


def render_fragment(result):
    """The section seatclaim-bench puts into docs/BENCHMARKS.md: where the
    figures are, and whether every target was met (the figures live in one
    doc only)."""
    lines = [f"Every function's INIT, exec→answer, size and peak RSS, the Python/boto3 comparison and the "
             f"warm CPU per call: [BENCH-COLD-START.md](BENCH-COLD-START.md), raw samples "
             f"`{DOC_JSON.relative_to(ROOT)}`.", ""]
    lines += render_verdict(result, "###")
    return "\n".join(lines) + "\n"


def build_description(bin_dir):
    """The cargo profile the binaries come from, as Cargo.toml sets it."""
    import tomllib  # noqa: PLC0415 (3.11+, only needed here)
    profile = "debug" if bin_dir.name == "debug" else "release"
    if profile == "debug":
        return "**debug build** (a smoke pass: the figures say nothing about the release binaries)"
    settings = tomllib.loads((ROOT / "Cargo.toml").read_text()).get("profile", {}).get("release", {})
    return "release profile: " + ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}".lower()
                                           for k, v in settings.items() if not isinstance(v, dict))


# ---------------------------------------------------------------- main


def shown_args(args):
    """The command line for the report, with what changes every run (ports,
    the table, temporary files, the target folder) as placeholders."""
    shown = []
    for flag, value in [("--server", "URL"), ("--ddb-endpoint", "URL"), ("--table", "TABLE"),
                        ("--fragment", "FILE")]:
        if getattr(args, flag[2:].replace("-", "_")):
            shown += [flag, value]
    if args.bin_dir:
        shown += ["--bin-dir", f"TARGET/{args.bin_dir.name}"]
    shown += ["--smoke"] * args.smoke + ["--build"] * args.build
    if args.only:
        shown += ["--only", *args.only]
    return shown + [f"--runs={args.runs}", f"--warm={args.warm}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, help="cold starts per function (default 20; 2 with --smoke)")
    parser.add_argument("--warm", type=int, help="warm get-seat calls for the CPU comparison (50; 5 with --smoke)")
    parser.add_argument("--smoke", action="store_true", help="2 runs, 5 warm calls, no docs written (CI)")
    parser.add_argument("--build", action="store_true", help="run cargo build even if the binaries exist")
    parser.add_argument("--only", nargs="+", metavar="FN", help="only these functions (and 'python')")
    parser.add_argument("--bin-dir", type=Path, help="the function binaries' folder (default: the release "
                        "folder of cargo's target directory, as `cargo metadata` reports it; built if missing)")
    parser.add_argument("--server", metavar="URL", help="set up through this running seatclaim server "
                        "instead of starting the dev server (needs --ddb-endpoint and --table)")
    parser.add_argument("--ddb-endpoint", metavar="URL", help="DynamoDB endpoint of --server")
    parser.add_argument("--table", help="table of --server")
    parser.add_argument("--fragment", type=Path, help="also write the summary (a link and the verdict), for docs/BENCHMARKS.md, here")
    parser.add_argument("--goals", type=Path, help="also write each Rust function's targets as JSON here "
                        "(seatclaim-bench judges them with its own)")
    parser.add_argument("--list", action="store_true", help="print the functions it times, those it "
                        "does not, and the status each must answer, as JSON, and exit (the tests check them)")
    args = parser.parse_args()
    if args.list:
        print(json.dumps({"timed": FUNCTIONS, "not_timed": sorted(NOT_TIMED), "expected": EXPECTED,
                          "queue": sorted(QUEUE_FUNCTIONS)}))
        return
    if args.server and not (args.ddb_endpoint and args.table):
        parser.error("--server needs --ddb-endpoint and --table")
    if args.runs is None:
        args.runs = 2 if args.smoke else 20
    if args.warm is None:
        args.warm = 5 if args.smoke else 50
    selected = args.only or FUNCTIONS + ["python"]
    rust_fns = [fn for fn in FUNCTIONS if fn in selected]
    with_python = "python" in selected

    started = time.perf_counter()
    command = " ".join([".tools/venv/bin/python", "scripts/bench_cold_start.py", *map(shlex.quote, shown_args(args))])
    rie = rie_path()
    bin_dir = (args.bin_dir or target_dir() / "release").resolve()
    ensure_binaries(rust_fns, args.build, bin_dir, args.bin_dir is not None, args.server is not None)
    if with_python:
        ensure_awslambdaric()
    stale = stale_binaries(rust_fns, bin_dir)
    if stale:
        log(f"warning: {len(stale)} source files are newer than the release binaries "
            f"({', '.join(stale[:5])}{', …' if len(stale) > 5 else ''}); run with --build to measure them")
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(), "command": command, "runs": args.runs, "warm_calls": args.warm,
            "versions": versions(rie), "stale_sources": stale, "build": build_description(bin_dir),
            "external_server": args.server is not None,
            "binaries_built": {fn: datetime.datetime.fromtimestamp(
                (bin_dir / fn).stat().st_mtime, datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M UTC") for fn in rust_fns}}

    workdir = Path(tempfile.mkdtemp(prefix="seatclaim-cold-"))
    sizes, zip_sizes = {}, {}
    for fn in rust_fns:
        (workdir / fn).mkdir()
        shutil.copy2(bin_dir / fn, workdir / fn / "bootstrap")
        sizes[fn] = (workdir / fn / "bootstrap").stat().st_size
        with zipfile.ZipFile(workdir / f"{fn}.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            zf.write(workdir / fn / "bootstrap", "bootstrap")  # the deployment package
        zip_sizes[fn] = (workdir / f"{fn}.zip").stat().st_size

    if args.server:
        server = DevServer.external(args.server, args.ddb_endpoint, args.table)
    else:
        log("starting the dev server (DynamoDB Local)")
        server = DevServer()
    result = {"meta": meta, "functions": {}, "warm": {}, "failures": []}
    run_id = uuid.uuid4().hex[:8]
    try:
        needed = args.runs * 4 + (args.warm + 1) * 2 + 20
        server.must(201, "PUT", f"/events/{EVENT}",
                    {"name": "Cold", "sections": [
                        {"sectionId": "A", "rows": [
                            {"row": str(r + 1), "count": SEATS_PER_ROW} for r in range(10)]},
                        {"sectionId": "B", "rows": [{"row": "1", "count": max(1000, needed)}]},
                        # hold-ga's events/ file holds places of FLOOR: without
                        # the section every cold start would be a 404.
                        {"sectionId": "FLOOR", "capacity": max(1000, needed)}]})
        if any(fn in WAITLIST_FUNCTIONS for fn in rust_fns):
            server.must(200, "PUT", f"/events/{EVENT}/waitlist",
                        json.loads(json.loads(event_payload("waitlist-admin"))["body"]))
        if "waitlist-entries" in rust_fns:
            server.entry = server.joined_entry()
        if any(fn in QUEUE_FUNCTIONS for fn in rust_fns):
            server.must(201, "PUT", f"/events/{QUEUE_EVENT}",
                        {"name": "Cold queue", "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 10}]}]})
            server.must(200, "PUT", f"/events/{QUEUE_EVENT}/queue",
                        json.loads(json.loads(event_payload("queue-admin", event_id=QUEUE_EVENT))["body"]))
        seats = Seats(server)
        shared_order = server.order()
        warm_up_store(server, seats)
        env = lambda_env(server)

        plan = rust_fns + ([PYTHON_FN] if with_python else [])
        samples = {fn: [] for fn in plan}
        # Round-robin over the functions, so drifting load on a shared
        # machine spreads over all of them alike.
        for i in range(args.runs):
            for fn in plan:
                sample = cold_start(rie, fn, prepare(fn, seats, run_id, i, shared_order), workdir, env)
                samples[fn].append(sample)
                # Any answer but the function's success code is a failure: a
                # cold start that did not do its real work measures nothing.
                bad = sample["status"] != EXPECTED[fn]
                if bad:
                    log(f"{fn} run {i + 1}: status {sample['status']}: {sample['body']}")
                    result["failures"].append({"function": fn, "run": i + 1, **sample})
            log(f"cold-start round {i + 1}/{args.runs} done")
        for fn in plan:
            e = summary([s["exec_to_answer_ms"] for s in samples[fn]])
            init = summary([s["init_ms"] for s in samples[fn]])
            rss = max((s["peak_rss_bytes"] for s in samples[fn] if s["peak_rss_bytes"]), default=None)
            size = sizes[fn] if fn != PYTHON_FN else (PY_HANDLER_DIR / "handler.py").stat().st_size
            counts = {}
            for s in samples[fn]:
                counts[str(s["status"])] = counts.get(str(s["status"]), 0) + 1
            result["functions"][fn] = {
                "binary_bytes": size, "zip_bytes": zip_sizes.get(fn), "exec_to_answer_ms": e, "init_ms": init,
                "report_init_ms": summary([s["report_init_ms"] for s in samples[fn]]), "peak_rss_bytes": rss,
                "status_counts": counts, "expected_status": EXPECTED[fn],
                "init_p90_within_target": bool(init) and init["p90"] <= TARGET_INIT_MS,
                "targets": {"init": bool(init) and init["p50"] <= TARGET_INIT_MS,
                            "binary": size <= TARGET_BINARY_BYTES,
                            "rss": rss is not None and rss <= TARGET_RSS_BYTES,
                            # Every cold start did its real work (success code).
                            "answered": all(s["status"] == EXPECTED[fn] for s in samples[fn])},
                "samples": samples[fn],
            }
            log(f"{fn}: exec→answer p50 {ms(e, 'p50')} ms, INIT p50 {ms(init, 'p50')} ms, "
                f"peak RSS {mb(rss)} MiB, {size:,} bytes, statuses {counts}")

        warm_fns = (["get-seat"] if "get-seat" in rust_fns else []) + ([PYTHON_FN] if with_python else [])
        if args.warm > 0 and warm_fns:
            result["warm"] = warm_cpu(rie, warm_fns, seats, args.warm, workdir, env)
            for fn, w in result["warm"].items():
                if not w["ok"]:
                    result["failures"].append({"function": fn, "warm": True, "statuses": w["statuses"]})
                log(f"{fn} warm: {w['cpu_ms_per_call_mean_stat']:.2f} CPU ms/call (stat), "
                    f"p50 {w['cpu_ms_per_call_schedstat']['p50']:.2f} (schedstat), statuses {w['statuses']}")
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    meta["duration_s"] = time.perf_counter() - started
    report = render(result)
    if not args.fragment:  # seatclaim-bench prints the fragment with its own report
        print(report)
    if not args.smoke:
        DOC_MD.parent.mkdir(exist_ok=True)
        DOC_MD.write_text(report)
        DOC_JSON.write_text(json.dumps(result, indent=1) + "\n")
        log(f"wrote {DOC_MD.relative_to(ROOT)} and {DOC_JSON.relative_to(ROOT)}")
    if args.fragment:
        args.fragment.write_text(render_fragment(result))
    if args.goals:
        args.goals.write_text(json.dumps(goals(result)) + "\n")
    if result["failures"]:
        log(f"{len(result['failures'])} failed or 5xx invocations")
        sys.exit(1)


def goals(result):
    """Each Rust function's three targets as figures held to bounds: INIT
    p50 (ms), binary and peak RSS (bytes); a figure not measured is null."""
    out = []
    for fn, r in result["functions"].items():
        if fn == PYTHON_FN:
            continue  # the comparison, not a target
        init = r["init_ms"]
        for figure, value, limit, source in [
            ("INIT p50 ms", init["p50"] if init else None, TARGET_INIT_MS, "TARGET_INIT_MS"),
            ("binary bytes", r["binary_bytes"], TARGET_BINARY_BYTES, "TARGET_BINARY_BYTES"),
            ("peak RSS bytes", r["peak_rss_bytes"], TARGET_RSS_BYTES, "TARGET_RSS_BYTES"),
        ]:
            out.append({"figure": f"cold start, {fn}: {figure}", "value": value, "at_most": limit,
                        "source": f"scripts/bench_cold_start.py `{source}`"})
    return out


if __name__ == "__main__":
    main()
