#!/usr/bin/env python3
"""Invoke every function with its events/ files through SAM's local emulator:
one file per HTTP route (named as the route), one per other function.

The functions run in SAM's Lambda emulation container (podman as the
engine, see scripts/sam-podman.sh) and talk to DynamoDB Local on the host,
started by the dev server. The order routes' files name an example order;
it is replaced by the order that create-order made. Prints one line per
invocation and a closing "N passed, N failed" line; exits non-zero on any
failure.

The confirm event is re-signed at invoke time (scripts/webhook_sign.py):
its body names the real order and the seat the flow holds, with a fresh
webhook-id, webhook-timestamp and webhook-signature. The Stripe event is
re-signed now by Stripe's own library (scripts/stripe_event.py).

The first invocation is `sam local invoke` itself; every later one goes
through `sam local start-lambda` with warm containers: the same template,
emulator, environment and binaries, one container per function kept for the
run. A `sam local invoke` is seconds of CPU for SAM's start and a container's
(measured: 27 invocations took ~170 s of the 2-core `make test`).
Invocations that do not depend on each other run at once, in stages.

The queue's functions run alongside, on an event of their own: a queue put, a
join admitted on the spot, the JWKS, an admitter run, an order opened under
the admission and the queue's removal. The admission is verified with PyJWT, an
implementation that is not ours, against the JWKS the function served.
"""
import collections
import contextlib
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import jwt
from samcli.yamlhelper import yaml_dump, yaml_parse

from cargo_target import binary
from dev_keys import DEV_BUYER_ISSUER, dev_admission_keys, dev_buyer_keys, dev_secret_arns
from ports import free_ports
from stripe_event import resign_stripe_event
from webhook_sign import DEV_SECRET, resign_confirm_event

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".tools" / "sam-local"
EXAMPLE_ORDER = "3d2d2b34abc1b57393e6-3f1c2a9e7b4d4c8e9a1f0d2b6e5c7a81"
# The secrets' ARN parameters: the development secrets, which the dev server's
# Secrets Manager stand-in serves (the functions read them at start-up, as in AWS).
SECRET_PARAMETERS = {"ConfirmSecretArn": "CONFIRM_SECRET",
                     "AdmissionSigningKeysSecretArn": "ADMISSION_SIGNING_KEYS",
                     "HoldTokenKeysSecretArn": "HOLD_TOKEN_KEYS",
                     "DrawSecretArn": "DRAW_SECRET",
                     "StripeWebhookSecretArn": "STRIPE_WEBHOOK_SECRET"}
EXAMPLE_TOKEN = "gala-2026~1795300000000~9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08~5f65066f0b45eff79cacd866fb294ebfd2a990a3787cab5eff0d63f9668a0d28"
# visitor-status's file names an example visitor and its token.
EXAMPLE_VISITOR = "EXAMPLE-VISITOR"
EXAMPLE_VISITOR_TOKEN = "EXAMPLE-VISITOR-TOKEN"
# entry-status's and leave-waitlist's name an example entry and its token
# (the token's name first: it holds the entry's).
EXAMPLE_ENTRY = "EXAMPLE-ENTRY"
EXAMPLE_ENTRY_TOKEN = "EXAMPLE-ENTRY-TOKEN"
TABLE = "seatclaim-sam-local"
EXAMPLE_EVENT = "gala-2026"
QUEUE_EVENT = "gala-2026-queue"
# An event with a buyer limit: create-order's sample with a buyer token
# minted now for it (the file's own is for the sample event, and expired).
LIMITED_EVENT = "gala-2026-limited"
# The waitlist's flow, on an event of its own (an open waitlist would refuse
# the sample event's orders), with a buyer token minted now for it.
WAITLIST_EVENT = "gala-2026-waitlist"
SAMPLE_BUYER_TOKEN = json.loads((ROOT / "events" / "create-order.json").read_text())["headers"]["x-buyer-token"]
# Invocations of one stage run together (a function's first call starts its container).
INVOCATIONS_AT_ONCE = 4
# How long SAM may wait for a new container's emulator to listen, and how
# long one invocation may take here: a container's start, then the local
# Timeout (LOCAL_TIMEOUT_SECONDS, above every Timeout in template.yaml), with room.
# A container not reached in a minute never is (seen: 120 s, then 120 s
# more for the same container); a loaded CI machine took 21 s to start one.
CONTAINER_START_SECONDS = 60
CALL_SECONDS = 300
# SAM's local timer can count part of a container's start against the
# function's Timeout: a loaded machine timed out GetOrderFunction's first call
# at its 10 s. Locally every function gets at least this long; the deployed
# Timeouts stay as template.yaml sets them.
LOCAL_TIMEOUT_SECONDS = 120
assert CONTAINER_START_SECONDS + LOCAL_TIMEOUT_SECONDS < CALL_SECONDS


def pascal(name):
    return "".join(w.capitalize() for w in name.split("-")) + "Function"


def http_routes():
    """Each HTTP route's function, by the route key template.yaml's HttpApi
    events give it (as API Gateway routes it)."""
    doc = yaml_parse((ROOT / "template.yaml").read_text())
    by_route = {}
    for name, res in doc["Resources"].items():
        if res["Type"] != "AWS::Serverless::Function":
            continue
        function = re.sub(r"(?<!^)(?=[A-Z])", "-", name[:-len("Function")]).lower()
        for trigger in res["Properties"].get("Events", {}).values():
            if trigger["Type"] == "HttpApi":
                by_route[f"{trigger['Properties']['Method']} {trigger['Properties']['Path']}"] = function
    return by_route


HTTP_ROUTES = http_routes()
# The functions API Gateway invokes: their replies are HTTP responses; every
# other function's (a schedule's, a stream's) is its own JSON.
HTTP_FUNCTIONS = set(HTTP_ROUTES.values())


def sample_functions():
    """The function each events/ file goes to: an HTTP sample's by the
    route its routeKey names; any other sample is named as its function."""
    samples = {}
    for path in (ROOT / "events").glob("*.json"):
        key = json.loads(path.read_text()).get("routeKey")
        samples[path.stem] = HTTP_ROUTES[key] if key else path.stem
    return samples


SAMPLE_FUNCTIONS = sample_functions()


def place_bootstrap(src, dst):
    """A hard link where the filesystem allows it: sixteen debug binaries
    copied would double their disk use (CI's disk ran out doing that)."""
    dst.unlink(missing_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def local_template(functions):
    """template.yaml for local runs: x86_64, prebuilt debug bootstraps,
    Timeouts of LOCAL_TIMEOUT_SECONDS at least, and the endpoint variables
    and the development secrets' permission declared so --env-vars can set
    them."""
    doc = yaml_parse((ROOT / "template.yaml").read_text())
    glob = doc["Globals"]["Function"]
    glob["Architectures"] = ["x86_64"]
    glob["Environment"]["Variables"]["AWS_ENDPOINT_URL_DYNAMODB"] = "unset"
    glob["Environment"]["Variables"]["AWS_ENDPOINT_URL_EVENTBRIDGE"] = "unset"
    glob["Environment"]["Variables"]["AWS_ENDPOINT_URL_SECRETS_MANAGER"] = "unset"
    # A local invoke may run the development secrets (template.yaml never declares it).
    glob["Environment"]["Variables"]["SEATCLAIM_ALLOW_DEV_SECRETS"] = "0"
    for fn in functions:
        res = doc["Resources"][pascal(fn)]
        res.pop("Metadata", None)
        code = WORK / "code" / fn
        code.mkdir(parents=True, exist_ok=True)
        place_bootstrap(binary(fn), code / "bootstrap")
        res["Properties"]["CodeUri"] = str(code)
        res["Properties"].pop("Architectures", None)
        res["Properties"]["Timeout"] = max(res["Properties"].get("Timeout", glob["Timeout"]), LOCAL_TIMEOUT_SECONDS)
    out = WORK / "template.yaml"
    out.write_text(yaml_dump(doc))
    return out


def start_dev_server(port, ddb_port):
    env = dict(os.environ, PORT=str(port), DYNAMODB_LOCAL_PORT=str(ddb_port), TABLE_NAME=TABLE,
               CONFIRM_SECRET=DEV_SECRET, SWEEP_INTERVAL_SECONDS="3600")
    proc = subprocess.Popen([str(binary("seatclaim-dev"))], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    for line in proc.stdout:
        if "listening on" in line:
            return proc
        if time.time() > deadline:
            break
    proc.kill()
    sys.exit("the dev server did not start")


def replaced(text, replacements):
    """`text` with every key of `replacements` replaced at once: a value
    that holds another key (a hold token names its event) stays as it is."""
    if not replacements:
        return text
    keys = sorted(replacements, key=len, reverse=True)
    return re.sub("|".join(map(re.escape, keys)), lambda m: replacements[m.group(0)], text)


def event_text(sample, replacements, edit=None):
    """events/<sample>.json with `replacements` made and `edit` applied."""
    text = replaced((ROOT / "events" / f"{sample}.json").read_text(), replacements)
    if edit is not None:
        text = json.dumps(edit(json.loads(text)), indent=2)
    return text


def sam_env():
    # SAM waits SAM_CLI_CONTAINER_CONNECTION_TIMEOUT (20 s by default) for a
    # new container's emulator to listen, then answers an empty reply with
    # exit 0. A CI machine deep into `make test` took 21 s to start one
    # container, and the next call's timed out: CONTAINER_START_SECONDS.
    return dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local", AWS_REGION="us-east-1",
                AWS_DEFAULT_REGION="us-east-1", SAM_CLI_TELEMETRY="0",
                SAM_CLI_CONTAINER_CONNECTION_TIMEOUT=str(CONTAINER_START_SECONDS))


def parameter_overrides():
    return ["--parameter-overrides", " ".join(f"{p}={dev_secret_arns()[v]}" for p, v in SECRET_PARAMETERS.items())]


# What SAM says when it gave up reaching a container it started, before the
# function ran: the invocation never happened, so sending it again is safe.
SAM_NEVER_REACHED = "Timed out while attempting to establish a connection to the container"
# Invocations sent again because SAM never reached their container: each
# is printed, and counted at the end. Once per invocation, no more.
RETRIED = []
# Warm calls answered past their function's Timeout (printed at the end).
SLOW = []


def sam_local_invoke(template, env_file, fn, text, retry=True):
    """`sam local invoke` of `fn` with `text` as its event: its reply, or
    None (the output printed). Sent again once if SAM never reached the
    container (a load-dependent failure of the emulator, not of the code)."""
    event = WORK / f"{fn}.{threading.get_ident()}.event.json"
    event.write_text(text)
    result = subprocess.run(
        ["sam", "local", "invoke", pascal(fn), "-t", str(template), "-e", str(event), "--env-vars", str(env_file),
         "--skip-pull-image", *parameter_overrides()],
        env=sam_env(), capture_output=True, text=True, timeout=CALL_SECONDS)
    if retry and SAM_NEVER_REACHED in result.stdout + result.stderr:
        RETRIED.append(fn)
        print(f"{fn}: SAM never reached its container; sending it again, once", file=sys.stderr)
        return sam_local_invoke(template, env_file, fn, text, retry=False)
    lines = [l for l in result.stdout.strip().splitlines() if l.startswith("{")]
    if result.returncode != 0 or not lines:
        print(result.stdout[-3000:], result.stderr[-3000:], sep="\n", file=sys.stderr)
        return None
    return json.loads(lines[-1])


def timeouts(template):
    """Each function's Timeout in seconds, as `template` gives it."""
    doc = yaml_parse(Path(template).read_text())
    default = doc["Globals"]["Function"].get("Timeout", 3)
    return {name: res["Properties"].get("Timeout", default) for name, res in doc["Resources"].items()
            if res["Type"] == "AWS::Serverless::Function"}


class WarmLambdas:
    """`sam local start-lambda` with warm containers: Lambda's Invoke API on
    a local port, one container per function, started at its first call.
    A warm container's timer only logs a timeout, where `sam local invoke`
    stops the function: a call past its function's Timeout is failed here,
    except a function's first, which starts its container (Lambda's init,
    which Timeout does not cover)."""

    def __init__(self, template, env_file, log):
        # Calls are held to the deployed Timeouts, not the local template's longer ones.
        self.timeouts = timeouts(ROOT / "template.yaml")
        self.port = free_ports(1)[0]
        self.log = log
        self.log_path = Path(log.name)
        self.proc = subprocess.Popen(
            ["sam", "local", "start-lambda", "-t", str(template), "--env-vars", str(env_file), "--skip-pull-image",
             "--warm-containers", "LAZY", "--no-watch", "--port", str(self.port), *parameter_overrides()],
            env=sam_env(), stdout=log, stderr=subprocess.STDOUT)
        # The emulator in a container takes one invocation at a time.
        self.locks = collections.defaultdict(threading.Lock)
        # A function's first call creates and starts its container, one at a
        # time: SAM picks a container's host port when it creates it and
        # binds it only when it starts it, so two at once may pick the same
        # (seen: "bind: address already in use", and the warm container,
        # kept, failed every later call of its function).
        self.starting = threading.Lock()
        self.warm = set()
        self.wait_until_serving()

    def wait_until_serving(self):
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"sam local start-lambda exited {self.proc.returncode}; see {self.log.name}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.5)
        self.stop()
        sys.exit(f"sam local start-lambda did not serve within 120 s; see {self.log.name}")

    def unreached_container_since(self, offset):
        """The container SAM logged, past `offset`, that it never reached
        ("" when it did not name it), or None when it reached them all."""
        with self.log_path.open(errors="replace") as log:
            log.seek(offset)
            logged = log.read()
        if SAM_NEVER_REACHED not in logged:
            return None
        started = re.findall(r"SAM_CONTAINER_ID: ([0-9a-f]+)", logged.split(SAM_NEVER_REACHED)[0])
        return started[-1] if started else ""

    def invoke(self, fn, text, retry=True):
        """`fn`'s reply to `text`, or None (the failure printed). A call
        whose container SAM never reached is sent again, once: SAM answers
        such a call with an empty 200 (it logs the timeout and exits 0, as
        `sam local invoke` does), so any unusable reply is checked against
        the log."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/2015-03-31/functions/{pascal(fn)}/invocations",
            data=text.encode(), method="POST")
        with self.locks[fn]:
            first = fn not in self.warm
            with self.starting if first else contextlib.nullcontext():
                self.log.flush()
                offset = self.log_path.stat().st_size
                reply = self.call(fn, request, first)
            self.warm.add(fn)
        unreached = self.unreached_container_since(offset) if reply is None and retry else None
        if unreached is not None and not first:
            # Only a call that started its container may name it: a later
            # id in the log is another function's.
            unreached = ""
        if unreached is not None:
            RETRIED.append(fn)
            print(f"{fn}: SAM never reached its container; sending it again, once, to a new one", file=sys.stderr)
            # SAM keeps a warm container it never reached and sends every
            # later call to it (seen: two calls, 120 s each, both lost):
            # removed, the next call creates and starts a new one.
            if unreached:
                subprocess.run(["podman", "rm", "--force", unreached], stdout=subprocess.DEVNULL, check=False)
            with self.locks[fn]:
                self.warm.discard(fn)
            return self.invoke(fn, text, retry=False)
        return reply

    def call(self, fn, request, first):
        """One call of `fn`: its JSON reply, or None (the failure printed)."""
        started = time.time()
        try:
            with urllib.request.urlopen(request, timeout=CALL_SECONDS) as reply:
                failed = reply.headers.get("X-Amz-Function-Error")
                payload = reply.read().decode()
        except OSError as e:  # urllib's HTTPError and timeouts alike
            print(f"{fn}: {e!r}", file=sys.stderr)
            return None
        took = time.time() - started
        limit = self.timeouts[pascal(fn)]
        if failed:
            print(f"{fn}: function error {failed}: {payload[:3000]}", file=sys.stderr)
            return None
        if took > limit and not first:
            # On AWS this call would have timed out; here the emulator and
            # this machine's load share the time, so it is counted and
            # printed, not failed (a function that hangs still fails at
            # CALL_SECONDS).
            SLOW.append(f"{fn} {took:.1f} s > {limit} s")
        try:
            return json.loads(payload)
        except ValueError:
            print(f"{fn}: not JSON: {payload[:3000]!r}", file=sys.stderr)
            return None

    def stop(self):
        # SIGINT: SAM stops and removes its warm containers on the way out.
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def published_sample(port):
    """Whether the dev feed holds the four events of events/publish-events.json
    (put there by the function through EventBridge's PutEvents)."""
    records = json.loads((ROOT / "events" / "publish-events.json").read_text())["Records"]
    ids = {f"{r['eventID']}.0" for r in records}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_dev/events?after=0", timeout=10) as reply:
        feed = json.load(reply)
    got = {e["detail"]["id"]: e["detailType"] for e in feed["events"] if e["detail"]["id"] in ids}
    return sorted(got.values()) == ["ga.sold", "order.completed", "order.created", "seat.sold"]


def verified_by_pyjwt(token, jwks, event_id, visitor_id):
    """The admission's claims as PyJWT reads them against `jwks`: ES256 only,
    the event as audience, seatclaim as issuer, no leeway at exp."""
    keys = jwt.PyJWKSet.from_dict(jwks)
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    claims = jwt.decode(token, key.key, algorithms=["ES256"], audience=event_id, issuer="seatclaim",
                        options={"require": ["exp", "iat", "sub", "jti"]})
    if claims["sub"] != visitor_id:
        raise ValueError(f"sub {claims['sub']} is not {visitor_id}")
    try:
        jwt.decode(token, key.key, algorithms=["ES256"], audience="another-event", issuer="seatclaim")
        raise ValueError("another event's audience was accepted")
    except jwt.InvalidAudienceError:
        pass
    return claims


def as_method(method, headers=None, body=None):
    """An events/ file's HTTP event with another method (and headers, body)."""
    def edit(event):
        event["requestContext"]["http"]["method"] = method
        route = event["routeKey"].split(" ", 1)[1]
        event["routeKey"] = event["requestContext"]["routeKey"] = f"{method} {route}"
        event["headers"].update(headers or {})
        if body is not None:
            event["body"] = body
        return event
    return edit


def create_event_over_http(port, event_id, **extra):
    """events/create-event.json's plan as `event_id` (with `extra` fields),
    through the dev server."""
    body = json.loads(json.loads((ROOT / "events" / "create-event.json").read_text())["body"])
    body.update(extra)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/events/{event_id}", method="PUT",
                                     data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        if reply.status != 201:
            sys.exit(f"create-event {event_id}: {reply.status}")


def queue_stages():
    """The queue's functions, through their events/ files on QUEUE_EVENT
    (nothing held: a join is admitted on the spot)."""
    yield [("put-queue", 200, lambda b: b["status"] == "OPEN" and b["ordersPerAdmission"] == 2)]
    # get-queue's two GET routes, each answered by its own handler.
    _, _, visitor = yield [("get-queue", 200, lambda b: b["admitPerMinute"] == 600 and "entries" not in b),
                           ("draw-list", 200, lambda b: isinstance(b.get("entries"), list) and "drawSeed" in b),
                           ("join-queue", 201, lambda b: b["status"] == "ADMITTED")]
    if not visitor:
        return
    token = visitor["admissionToken"]
    yield ("use-visitor", visitor)

    def pyjwt_accepts(jwks):
        try:
            claims = verified_by_pyjwt(token, jwks, QUEUE_EVENT, visitor["visitorId"])
        except Exception as e:  # any refusal is this check's failure, reported
            print(f"PyJWT refused the admission: {e!r}", file=sys.stderr)
            return False
        expires = datetime.fromisoformat(visitor["admissionExpiresAt"].replace("Z", "+00:00"))
        return claims["exp"] == int(expires.timestamp())

    yield [("admission-keys", 200, pyjwt_accepts),
           ("admit-visitors", 200, lambda b: b["ticks"] >= 1 and b["queues"] >= 1),
           ("visitor-status", 200, lambda b: b["status"] == "ADMITTED" and b["visitorId"] == visitor["visitorId"]),
           ("create-order", 201, lambda b: b["status"] == "PENDING",
            as_method("POST", {"authorization": f"Bearer {token}", "idempotency-key": "sam-1"}))]
    yield [("delete-queue", 200, lambda b: b == {"eventId": QUEUE_EVENT, "status": "REMOVED"})]


def buyer_token_over_http(port, event_id, buyer_id):
    """A buyer token for `buyer_id` on `event_id`, as the seller's sign-in
    would mint it: the dev server's /_dev/buyer-token, the development key."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/_dev/buyer-token", method="POST",
                                     data=json.dumps({"eventId": event_id, "buyerId": buyer_id}).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())["buyerToken"]


def limited_stages():
    """create-order's sample on LIMITED_EVENT: its own token refused, one
    minted now (the flow's replacement) opening the buyer's order. What a
    buyer's order then holds is counted in testkit's samples.rs and
    buyer_limits.rs: each invocation here is seconds of a container."""
    def sample_token(event):
        event["headers"]["x-buyer-token"] = SAMPLE_BUYER_TOKEN
        return event

    yield [("create-order", 401, lambda b: b["error"] == "buyer-token-invalid", sample_token),
           ("create-order", 201, lambda b: b["status"] == "PENDING" and b["holdToken"].startswith(LIMITED_EVENT + "~"))]


def waitlist_stages():
    """The waitlist's routes on WAITLIST_EVENT: put (armed), read, opened
    now; a buyer (a token minted now, the flow's replacement) joins, reads
    its entry (waiting, or offered by the dev server's offerer) and is
    listed; the organiser removes it, and the buyer's leave then answers it
    as it stands; the offerer's function ticks; end."""
    yield [("put-waitlist", 200, lambda b: b["status"] == "ARMED" and b["maxQuantity"] == 4)]
    yield [("get-waitlist", 200, lambda b: b["opens"] == "sold-out")]
    yield [("put-waitlist", 200, lambda b: b["status"] == "OPEN", as_method("PUT", body='{"opens":"now"}'))]
    (entry,) = yield [("join-waitlist", 201, lambda b: b["status"] == "WAITING" and b["quantity"] == 2)]
    if not entry:
        return
    yield ("use-entry", entry)
    # The dev server's own offerer may have offered it the event's free seats
    # already (it checks for joins every 2 s).
    yield [("entry-status", 200, lambda b: b["status"] in ("WAITING", "OFFERED") and b["entryId"] == entry["entryId"]),
           ("list-entries", 200, lambda b: [e["entryId"] for e in b["entries"]] == [entry["entryId"]]
            and "entryToken" not in b["entries"][0])]
    yield [("remove-entry", 200, lambda b: b["status"] == "ENDED" and b["reason"] == "removed")]
    yield [("leave-waitlist", 200, lambda b: b["status"] == "ENDED" and b["reason"] == "removed")]
    # The offerer's tick visits the open waitlist (the put listed it in the
    # registry); nobody waits, so nothing is offered.
    yield [("offer-waitlists", 200, lambda b: b["ticks"] >= 1 and b["waitlists"] >= 1 and b["offers"] == 0)]
    yield [("delete-waitlist", 200, lambda b: b == {"eventId": WAITLIST_EVENT, "status": "ENDED"})]


def order_stages(port):
    """The seat map and order functions: each stage's invocations run at
    once (they do not depend on each other), a stage after the one before."""
    # Before anything is held (project-seat-map's sample marks A-1-7 held).
    replies = yield [
        ("get-event", 200, lambda b: b["status"] == "READY" and b["sections"][0]["sectionId"] == "A"),
        ("list-seats", 200, lambda b: len(b["seats"]) == 40),
        ("availability", 200, lambda b: [r["statuses"] for s in b["sections"] for r in s.get("rows", [])][0] == "A" * 20
         and b["sections"][-1] == {"sectionId": "FLOOR", "kind": "ga", "capacity": 500, "available": 500}),
        ("create-order", 201, lambda b: b["status"] == "PENDING"),
        ("expire-holds", 200, lambda b: b == {"expiredOrders": 0, "releasedSeats": 0, "releasedPlaces": 0}),
        ("publish-events", 200, lambda b: b == {"batchItemFailures": []} and published_sample(port)),
    ]
    order = replies[3]
    if not order:
        return
    yield ("use-order", order)
    yield [("get-seat", 200, lambda b: b["status"] == "HELD")]
    yield [("get-order", 200, lambda b: b["seats"] == ["A-1-7"]),
           ("extend-order", 200, lambda b: b["orderId"] == order["orderId"] and b["expiresAt"] > order["expiresAt"]
            and b["holdToken"] != order["holdToken"]),
           ("project-seat-map", 200, lambda b: b == {"batchItemFailures": []})]
    yield [("drop-seat", 200, lambda b: b["status"] == "AVAILABLE")]
    yield [("get-seat", 200, lambda b: b["status"] == "HELD")]
    held = json.loads((ROOT / "events" / "get-seat.json").read_text())["pathParameters"]["seatId"]  # A-1-7
    yield [("confirm", 200, lambda b: b["status"] == "COMPLETED" and b["paymentId"] == "pi_3PexampleA1"
            and b["seats"] == [held], lambda event: resign_confirm_event(event, [held]))]
    # Stripe pays the completed order again (another session): nothing sold,
    # the payment recorded for refund, and a 200 so Stripe stops retrying.
    yield [("stripe-payment", 200, lambda b: b["outcome"] == "not-sold" and b["error"] == "already-completed"
            and b["refund"] is True, resign_stripe_event)]
    # Returns: the completed order asks to list a seat it did not buy (or no
    # waitlist takes returns): 409; a withdrawal of what it never listed
    # answers the order as it stands.
    yield [("list-returns", 409, lambda b: b["error"] in ("returns-closed", "return-not-owned"))]
    yield [("withdraw-return", 200, lambda b: b["orderId"] == order["orderId"] and "returns" not in b),
           ("withdraw-return-ga", 200, lambda b: b["status"] == "COMPLETED")]
    # A second order, cancelled (the first is completed: 409 there).
    (second,) = yield [("create-order", 201, lambda b: b["status"] == "PENDING")]
    if not second:
        return
    yield ("use-order", second)
    yield [("best-available", 200, lambda b: b["status"] == "HELD" and len(b["seats"]) == 2)]
    yield [("hold-ga", 200, lambda b: b["sectionId"] == "FLOOR" and b["quantity"] == 2)]
    yield [("cancel-order", 200, lambda b: b == {"orderId": second["orderId"], "status": "CANCELLED"})]


def use(what, reply):
    """The replacements that make the rest of a flow name `reply`'s order
    ("use-order"), entry ("use-entry") or visitor ("use-visitor") for the
    example's."""
    if what == "use-order":
        return {EXAMPLE_ORDER: reply["orderId"], EXAMPLE_TOKEN: reply["holdToken"]}
    if what == "use-entry":
        return {EXAMPLE_ENTRY_TOKEN: reply["entryToken"], EXAMPLE_ENTRY: reply["entryId"]}
    return {EXAMPLE_VISITOR_TOKEN: reply["visitorToken"], EXAMPLE_VISITOR: reply["visitorId"]}


def running_containers():
    """The ids of the containers running now."""
    out = subprocess.run(["podman", "ps", "--quiet", "--no-trunc"], capture_output=True, text=True, check=False)
    return set(out.stdout.split())


def main():
    # One binary per function (functions/src/bin/, held to shared::routes by the tests).
    functions = sorted(p.stem for p in (ROOT / "functions" / "src" / "bin").glob("*.rs"))
    WORK.mkdir(parents=True, exist_ok=True)
    template = local_template(functions)
    port, ddb_port = free_ports(2)
    server = start_dev_server(port, ddb_port)
    subprocess.run([str(ROOT / "scripts" / "sam-podman.sh"), "start"], check=True, stdout=subprocess.DEVNULL)
    already_running = running_containers()
    exports = subprocess.run([str(ROOT / "scripts" / "sam-podman.sh"), "env"], check=True, capture_output=True, text=True).stdout
    for line in exports.splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            os.environ[key] = value.strip().strip('"').strip("'")
    env_file = WORK / "env.json"
    env_file.write_text(json.dumps({"Parameters": {
        "TABLE_NAME": TABLE,
        "AWS_ENDPOINT_URL_DYNAMODB": f"http://host.containers.internal:{ddb_port}",
        # publish-events puts its events on the dev server's PutEvents (its dev feed).
        "AWS_ENDPOINT_URL_EVENTBRIDGE": f"http://host.containers.internal:{port}",
        "EVENT_BUS_NAME": "seatclaim-sam-local",
        "RUST_LOG": "info",
        # The functions read their secrets from the dev server's stand-in, by
        # the ARNs the template gives them (the parameters above).
        "AWS_ENDPOINT_URL_SECRETS_MANAGER": f"http://host.containers.internal:{port}",
        "ADMISSION_VERIFY_KEYS": dev_admission_keys()[1],
        "BUYER_VERIFY_KEYS": dev_buyer_keys()[1],
        "BUYER_ISSUER": DEV_BUYER_ISSUER,
        # The development secrets, as every function is told here: a local
        # invoke (the functions refuse them otherwise, and template.yaml never
        # sets this).
        "SEATCLAIM_ALLOW_DEV_SECRETS": "1",
        "ADMITTER_RUN_SECONDS": "1",
        "OFFERER_RUN_SECONDS": "1",
    }}))

    passed, failed = 0, 0
    lock = threading.Lock()

    warm = None

    def check(sample, want_status, check_body, edit, replacements):
        nonlocal passed, failed
        fn = SAMPLE_FUNCTIONS[sample]
        text = event_text(sample, replacements, edit)
        started = time.time()
        reply = warm.invoke(fn, text) if warm else sam_local_invoke(template, env_file, fn, text)
        elapsed = time.time() - started
        ok = False
        body = None
        if reply is not None:
            if fn not in HTTP_FUNCTIONS:
                body, status = reply, 200
            else:
                status = reply.get("statusCode")
                body = json.loads(reply.get("body") or "null")
            ok = status == want_status and (check_body is None or check_body(body))
        with lock:
            how = "sam local start-lambda (warm)" if warm else "sam local invoke"
            print(f"{how} {pascal(fn)} events/{sample}.json: {'ok' if ok else 'FAILED'} ({elapsed:.1f}s) {json.dumps(body)[:160]}",
                  flush=True)
            passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
        return body if ok else None  # a failed step gives the steps after it nothing to go on

    def run(stages, pool, replacements):
        """Each stage's invocations at once, the bodies sent back into the
        stages; `replacements` rewrite the events/ files (a flow's event,
        its order)."""
        bodies = None
        while True:
            try:
                stage = stages.send(bodies)
            except StopIteration:
                return
            if isinstance(stage, tuple):  # ("use-order", reply): the order the rest names
                replacements = dict(replacements, **dict(use(*stage)))
                bodies = None
                continue
            bodies = list(pool.map(lambda c: check(*(c + (None,) * (4 - len(c))), replacements), stage))

    try:
        # The queue's flow on an event of its own, alongside the orders' (a
        # queue on the sample event would make its create-order ask for an
        # admission).
        create_event_over_http(port, QUEUE_EVENT)
        create_event_over_http(port, LIMITED_EVENT, buyerLimit=1)
        minted = buyer_token_over_http(port, LIMITED_EVENT, "user:42")
        create_event_over_http(port, WAITLIST_EVENT)
        minted_for_waitlist = buyer_token_over_http(port, WAITLIST_EVENT, "user:7")
        # One invocation alone first: on a fresh machine it builds SAM's
        # emulation image, which two invocations at once would both build.
        check("create-event", 201, lambda b: b["eventId"] == "gala-2026" and b["seatCount"] == 50, None, {})
        warm = WarmLambdas(template, env_file, (WORK / "start-lambda.log").open("w"))
        with ThreadPoolExecutor(max_workers=INVOCATIONS_AT_ONCE) as pool, ThreadPoolExecutor(max_workers=3) as flows:
            side_flows = [flows.submit(run, queue_stages(), pool, {EXAMPLE_EVENT: QUEUE_EVENT}),
                          flows.submit(run, limited_stages(), pool,
                                       {EXAMPLE_EVENT: LIMITED_EVENT, SAMPLE_BUYER_TOKEN: minted}),
                          flows.submit(run, waitlist_stages(), pool,
                                       {EXAMPLE_EVENT: WAITLIST_EVENT, SAMPLE_BUYER_TOKEN: minted_for_waitlist})]
            run(order_stages(port), pool, {})
            for flow in side_flows:
                flow.result()  # its exception, if any, is this run's
    finally:
        if warm:
            warm.stop()
        # SAM's SIGINT does not always remove its warm containers, and one
        # left up may hold a host port (8000, say) the next make dev needs.
        left = running_containers() - already_running
        if left:
            subprocess.run(["podman", "rm", "--force", *sorted(left)], stdout=subprocess.DEVNULL, check=False)
            print(f"sam local: removed {len(left)} container(s) SAM left running")
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        subprocess.run([str(ROOT / "scripts" / "sam-podman.sh"), "stop"], stdout=subprocess.DEVNULL)
        # What the emulator's load did, whatever ended the run.
        print(f"sam local: {len(RETRIED)} invocation(s) sent again because SAM never reached the container"
              + (f" ({', '.join(RETRIED)})" if RETRIED else ""))
        print(f"sam local: {len(SLOW)} warm call(s) answered past their Timeout"
              + (f" ({'; '.join(SLOW)})" if SLOW else ""))
    if failed and warm:
        # SAM's own account of what went wrong (container starts, timeouts),
        # near the end: the part of the output a CI log keeps.
        lines = warm.log_path.read_text(errors="replace").splitlines()
        trouble = [l for l in lines if re.search(r"(?i)timed out|timeout|no response|error|exception|traceback", l)]
        print("start-lambda's log, its lines of trouble:", *trouble[-40:], sep="\n", file=sys.stderr)
    print(f"sam local invoke and start-lambda: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
