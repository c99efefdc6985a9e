"""Schemathesis hooks for scripts/fuzz_api.py (loaded via SCHEMATHESIS_HOOKS).

- Order routes: most cases are pointed at real orders (seeded ones and any
  the fuzzer itself created) with their real hold tokens, and get-seat /
  drop-seat often at real seats, so the deep paths run (claims, conflicts,
  seat-limit, not-holdable), not only 400/401/404.
- Confirm: most requests are signed as Standard Webhooks (webhook-id,
  webhook-timestamp, webhook-signature; scripts/webhook_sign.py) with the
  server's secret over the exact raw body that is sent, and most of those
  bodies are real payments: the path's orderId and the seats that order
  holds (tracked from the seeds and from every get-seat, drop-seat and
  best-available answer), with a fresh, the order's own or another order's
  paymentId. So the paths behind the signature run: completion, idempotent
  replays, partial payments, payment-reused, already-completed, late
  payments and refunds. The rest: seats it does not hold, a seat twice, the
  body as generated (orderId mismatch), or a bad signature (stale or future
  timestamp, wrong key, garbled), or one good signature among bad ones.
  Some confirms of unknown orders are pointed at a seeded order that can
  still be sold, so every run sells through confirm.
- Stripe's route: most requests are Checkout Session events signed by
  Stripe's own library (scripts/stripe_event.py) with the server's secret,
  most of them paying for the held seats of the seeded orders kept for it
  (so its sales leave confirm's orders alone): a completed or a
  not-yet-paid session, a delayed payment's success, another event type;
  the rest as generated, unsigned or with a stale signature.
- Every request's status is tallied; the totals are written to FUZZ_STATS
  at exit for the summary.
"""

import atexit
import base64
import collections
import collections.abc
import json
import os
import random
import sys
import threading
import time
import uuid

import schemathesis
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # scripts/, for webhook_sign
from webhook_sign import DEV_SECRET, webhook_headers  # noqa: E402
from dev_keys import dev_stripe_secret  # noqa: E402
from stripe_event import stripe_signature  # noqa: E402

SECRET = os.environ.get("FUZZ_CONFIRM_SECRET", DEV_SECRET)
OTHER_SECRET = "whsec_" + base64.b64encode(b"not-the-server-key-not-the-server-key").decode()
WEBHOOK_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")
SEEDS = json.load(open(os.environ["FUZZ_SEEDS"])) if os.environ.get("FUZZ_SEEDS") else {"orders": [], "seats": ["A-1-1"]}
STATS_PATH = os.environ.get("FUZZ_STATS")
# Our own choices come from the OS, not the `random` module: hypothesis re-seeds
# the global generator for every test case (deterministic_PRNG), so choices drawn
# from it never varied (docs/FUZZING.md: 1,850 of 1,852 confirms signed, not ~85%).
_rng = random.SystemRandom()

_lock = threading.Lock()
# [orderId, holdToken] pairs: the seeded orders plus every order created during the run.
_orders = [[o["orderId"], o["holdToken"]] for o in SEEDS["orders"]]
_tokens = {o: t for o, t in _orders}
_seats = list(SEEDS["seats"])
# orderId -> the seats a payment for it names: held now (or when it was paid,
# expired or cancelled); orderId -> the paymentId recorded for it.
_held = {o["orderId"]: list(o.get("seats", [])) for o in SEEDS["orders"] + SEEDS.get("stripe_orders", [])}
# The Stripe route's own seeded orders (confirm's cases never pick them).
_stripe_orders = [o["orderId"] for o in SEEDS.get("stripe_orders", [])]
_paid = {o["orderId"]: o["paymentId"] for o in SEEDS["orders"] if o.get("paymentId")}
_sent_payment = {}  # id(case) -> (orderId, paymentId) of a confirm in flight
_stats = {
    "requests": 0,
    "failed_requests": 0,
    "statuses": collections.Counter(),
    "by_operation": collections.defaultdict(collections.Counter),
    "server_errors": [],
    "error_codes": collections.Counter(),
    "bad_request_messages": collections.Counter(),
    "signed_confirms": 0,
    "confirm_kinds": collections.Counter(),
}


def _operation(case):
    return f"{case.method.upper()} {case.path}"


CONFIRM_PATH = "/orders/{orderId}/confirm"


def _retarget(case, pick, order_index, seat_index, with_token):
    """Points an order route's case at a known order (and seat)."""
    if pick == 0 or not _orders:
        return case  # as generated: random ids and tokens
    order_id, token = _orders[order_index % len(_orders)]
    case.path_parameters["orderId"] = order_id
    if "seatId" in case.path_parameters and pick >= 2:
        case.path_parameters["seatId"] = _seats[seat_index % len(_seats)]
    if with_token and case.path != "/orders/{orderId}/confirm":
        case.headers["Authorization"] = f"Bearer {token}"
    return case


# Seeded queue visitors and waitlist entries, each with its token
# (scripts/fuzz_api.py), by the route that takes it: the path parameter that
# names it, and the seed's fields for its id and its token.
HOLDER_ROUTES = {
    "/events/{eventId}/queue/visitors/{visitorId}": (SEEDS.get("visitors", []), "visitorId", "visitorToken"),
    "/events/{eventId}/waitlist/entries/{entryId}": (SEEDS.get("entries", []), "entryId", "entryToken"),
}


def _hold(case, pick, index, with_token):
    """Points a visitor's or an entry's case at a seeded one, with its token
    most of the time: the route's work behind the token runs, not only its
    401."""
    seeds, id_field, token_field = HOLDER_ROUTES[case.path]
    if pick == 0 or not seeds:
        return case
    held = seeds[index % len(seeds)]
    case.path_parameters["eventId"] = held["eventId"]
    case.path_parameters[id_field] = held[id_field]
    if with_token:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {held[token_field]}"}
    return case


@schemathesis.hook
def flatmap_case(context, case):
    if case.path in HOLDER_ROUTES:
        return st.builds(
            lambda pick, i, tok: _hold(case, pick, i, tok),
            st.integers(0, 3),
            st.integers(0, 1 << 20),
            st.integers(0, 5).map(lambda n: n > 0),
        )
    if not case.path.startswith("/orders/{orderId}"):
        return st.just(case)
    return st.builds(
        lambda pick, o, s, tok: _retarget(case, pick, o, s, tok),
        st.integers(0, 3),
        st.integers(0, 1 << 20),
        st.integers(0, 1 << 20),
        st.integers(0, 5).map(lambda n: n > 0),
    )


def _raw_body(case):
    body = case.body
    if type(body).__name__ == "NotSet":
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str) and (case.media_type or "").startswith("text/"):
        return body.encode()
    return json.dumps(body, ensure_ascii=False).encode()


# Framing headers belong to the HTTP client, not to the API: a generated
# `content-length: 2W%i` makes the dev server's HTTP parser (hyper) refuse
# the connection's request before any handler runs, and API Gateway never
# passes such a request on.
TRANSPORT_HEADERS = ("content-length", "transfer-encoding", "host", "connection")


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.headers:
        for key in [k for k in case.headers if k.lower() in TRANSPORT_HEADERS]:
            del case.headers[key]
    # Stateful links hand over real order ids but no token (it travels in a
    # header): most of the time, send the order's own token.
    order_id = case.path_parameters.get("orderId") if case.path_parameters else None
    token = _tokens.get(order_id) if isinstance(order_id, str) else None
    if token and case.path != "/orders/{orderId}/confirm" and _rng.random() < 0.8:
        case.headers["Authorization"] = f"Bearer {token}"
    if case.path == CONFIRM_PATH and _rng.random() < 0.3:
        _pay_a_holder(case)
    if case.path == "/orders/{orderId}/confirm" and _rng.random() < 0.85:
        _sign_confirm(case, kwargs)
    if case.path == STRIPE_PATH and _rng.random() < 0.85:
        _sign_stripe(case, kwargs)


STRIPE_PATH = "/payments/stripe"
STRIPE_SECRET = os.environ.get("FUZZ_STRIPE_SECRET") or dev_stripe_secret()
STRIPE_KINDS = [("checkout.session.completed", "paid")] * 6 + [
    ("checkout.session.completed", "unpaid"), ("checkout.session.async_payment_succeeded", "paid"),
    ("checkout.session.expired", "unpaid"), ("invoice.paid", "paid")]


def _stripe_event(case):
    """(kind, event): a Checkout Session event for a known order paying for
    what it holds (mostly), or the generated body."""
    with _lock:
        # Mostly its own orders; now and then one confirm also works on.
        orders = _stripe_orders if _stripe_orders and _rng.random() < 0.9 else [o for o, _ in _orders]
    if not orders or _rng.random() < 0.15:
        body = case.body
        return "as-generated", body if type(body).__name__ != "NotSet" else None
    order_id = _rng.choice(orders)
    with _lock:
        held = list(_held.get(order_id, [])) or _rng.sample(_seats, 1)
    kind, status = _rng.choice(STRIPE_KINDS)
    session = f"cs_test_fz{uuid.uuid4().hex}{uuid.uuid4().hex[:24]}"
    metadata = {"seatclaimOrderId": order_id, "seatclaimSeats": json.dumps(held)}
    event = {"id": f"evt_fz{uuid.uuid4().hex[:20]}", "object": "event", "type": kind, "livemode": False,
             "data": {"object": {"id": session, "object": "checkout.session", "payment_status": status,
                                 "metadata": metadata, "mode": "payment"}}}
    return kind, event


def _sign_stripe(case, kwargs):
    kind, body = _stripe_event(case)
    if kind != "as-generated":
        case.body = body
    try:
        raw = _raw_body(case)
    except (TypeError, ValueError):
        return
    kwargs["data"] = raw
    kwargs.pop("json", None)
    if case.headers is None:
        case.headers = {}
    _set_header(case, kwargs, "Content-Type", "application/json")
    stale = _rng.random() < 0.08
    at = int(time.time()) - (_rng.randint(301, 86400) if stale else 0)
    _set_header(case, kwargs, "Stripe-Signature", stripe_signature(raw.decode("utf-8", "replace"), STRIPE_SECRET, at))
    with _lock:
        _stats["confirm_kinds"]["stripe " + kind + ("+stale" if stale else "")] += 1


def _payment_id(order_id):
    """The order's own paymentId (a replay), another order's (reused), or a fresh one."""
    r = _rng.random()
    with _lock:
        own = _paid.get(order_id)
        others = [p for o, p in _paid.items() if o != order_id]
    if own and r < 0.35:
        return own
    if others and r > 0.9:
        return _rng.choice(others)
    return f"pi_fz_{uuid.uuid4().hex[:16]}"


def _payment_body(case, order_id):
    """(kind, body): a payment for the order as the backend would send it,
    mostly naming exactly what it holds, sometimes not."""
    with _lock:
        held = list(_held.get(order_id, []))
    r = _rng.random()
    payment = _payment_id(order_id)
    if held and r < 0.6:
        return "exact", {"orderId": order_id, "paymentId": payment, "seats": held}
    if len(held) >= 2 and r < 0.7:
        return "partial", {"orderId": order_id, "paymentId": payment, "seats": _rng.sample(held, _rng.randint(1, len(held) - 1))}
    if r < 0.85:
        extra = _rng.sample(_seats, min(len(_seats), _rng.randint(1, 3)))
        return "other-seats", {"orderId": order_id, "paymentId": payment, "seats": held + [s for s in extra if s not in held]}
    if held and r < 0.9:
        return "seat-twice", {"orderId": order_id, "paymentId": payment, "seats": held + held[:1]}
    body = case.body
    return "as-generated", body if type(body).__name__ != "NotSet" else None


def _set_header(case, kwargs, name, value):
    """Sets a header on the case and on the request about to go out, case-insensitively."""
    # case.headers is a CaseInsensitiveDict: a mapping, not a dict.
    for headers in (case.headers, kwargs.get("headers")):
        if isinstance(headers, collections.abc.MutableMapping):
            for key in [k for k in headers if k.lower() == name.lower()]:
                del headers[key]
            headers[name] = value


def _unpaid_holder():
    """A seeded order that holds seats and has no payment yet, if any."""
    with _lock:
        ready = [o for o, _ in _orders if _held.get(o) and o not in _paid]
    return _rng.choice(ready) if ready else None


def _pay_a_holder(case):
    """Points a confirm of an order nobody knows (every phase's cases, not
    only those `_retarget` drew) at one that can still be sold, so the sale
    runs every run, not only in runs whose retargets happened to land. The
    case is serialised after this hook: its path parameter is what is sent."""
    order_id = (case.path_parameters or {}).get("orderId")
    holder = _unpaid_holder()
    if holder is not None and not _held.get(order_id):
        case.path_parameters["orderId"] = holder


def _sign_confirm(case, kwargs):
    order_id = (case.path_parameters or {}).get("orderId")
    if isinstance(order_id, str) and _rng.random() < 0.8:
        kind, body = _payment_body(case, order_id)
        if kind != "as-generated":
            case.body = body
    else:
        kind, body = "as-generated", case.body
    try:
        raw = _raw_body(case)
    except (TypeError, ValueError):
        return  # not JSON-serialisable: leave it to schemathesis, unsigned
    kwargs["data"] = raw
    kwargs.pop("json", None)
    if case.headers is None:
        case.headers = {}
    _set_header(case, kwargs, "Content-Type", "application/json")
    signed = webhook_headers(raw, SECRET)
    r = _rng.random()
    if r < 0.06:
        kind += "+stale"  # outside the 300 s tolerance, either way
        signed = webhook_headers(raw, SECRET, timestamp=int(time.time()) + _rng.choice([-1, 1]) * _rng.randint(301, 86400))
    elif r < 0.10:
        kind += "+wrong-key"
        signed = webhook_headers(raw, OTHER_SECRET)
    elif r < 0.13:
        kind += "+garbled"
        signed["webhook-signature"] = signed["webhook-signature"][:-6] + "AAAAA="
    elif r < 0.18:
        kind += "+rotated"  # one good signature among others: accepted
        other = webhook_headers(raw, OTHER_SECRET, signed["webhook-id"], int(signed["webhook-timestamp"]))
        signed["webhook-signature"] = f"{other['webhook-signature']} {signed['webhook-signature']} v2,Zm9v"
    for name in WEBHOOK_HEADERS:
        _set_header(case, kwargs, name, signed[name])
    payment = body.get("paymentId") if isinstance(body, dict) else None
    with _lock:
        _stats["signed_confirms"] += 1
        _stats["confirm_kinds"][kind] += 1
        if isinstance(order_id, str) and isinstance(payment, str):
            _sent_payment[id(case)] = (order_id, payment)


@schemathesis.hook
def after_call(context, case, response):
    status = response.status_code
    with _lock:
        _stats["requests"] += 1
        _stats["statuses"][status] += 1
        _stats["by_operation"][_operation(case)][status] += 1
        if status >= 500 and len(_stats["server_errors"]) < 50:
            _stats["server_errors"].append(
                {"request": f"{case.method.upper()} {case.formatted_path}", "status": status,
                 "body": response.content[:500].decode("utf-8", "replace")}
            )
    if status >= 400:
        try:
            reply = json.loads(response.content)
            code = reply.get("error")
            with _lock:
                _stats["error_codes"][f"{status} {code}"] += 1
                if code == "bad-request":
                    # Messages name the field; cut before the value-specific tail.
                    _stats["bad_request_messages"][f"{case.method.upper()} {case.path}: {reply.get('message', '')[:70]}"] += 1
        except (ValueError, AttributeError, TypeError):
            pass
    if case.path == "/events/{eventId}/orders" and status == 201:
        try:
            reply = json.loads(response.content)
            with _lock:
                _orders.append([reply["orderId"], reply["holdToken"]])
                _tokens[reply["orderId"]] = reply["holdToken"]
        except (ValueError, KeyError, TypeError):
            pass
    _track_holds(case, status, response)


def _track_holds(case, status, response):
    """Keeps _held and _paid up to date, for the payments _sign_confirm sends."""
    params = case.path_parameters or {}
    order_id = params.get("orderId")
    sent = None
    with _lock:
        if case.path == "/orders/{orderId}/confirm":
            sent = _sent_payment.pop(id(case), None)
    if not isinstance(order_id, str) or status >= 500:
        return
    try:
        reply = json.loads(response.content) if response.content else {}
    except ValueError:
        reply = {}
    if not isinstance(reply, dict):
        reply = {}
    method = case.method.upper()
    with _lock:
        held = _held.setdefault(order_id, [])
        if case.path == "/orders/{orderId}/seats/{seatId}" and status == 200:
            seat = params.get("seatId")
            if method == "POST" and seat not in held:
                held.append(seat)
            elif method == "DELETE" and seat in held:
                held.remove(seat)
        elif case.path == "/orders/{orderId}/best-available" and status == 200:
            held.extend(s for s in reply.get("seats", []) if isinstance(s, str) and s not in held)
        elif case.path == "/orders/{orderId}/confirm" and sent and sent[0] == order_id:
            if status == 200 or (status == 409 and reply.get("refund") and reply.get("error") != "already-completed"):
                _paid.setdefault(order_id, sent[1])  # completed, or REFUND_DUE: its recorded paymentId
            if status == 200 and isinstance(reply.get("seats"), list):
                _held[order_id] = [s for s in reply["seats"] if isinstance(s, str)]  # what it bought


@schemathesis.hook
def after_validate(context, case, response, results):
    if any(getattr(r, "failure", None) is not None for r in results):
        with _lock:
            _stats["failed_requests"] += 1


@atexit.register
def _write_stats():
    if not STATS_PATH:
        return
    with _lock:
        out = dict(_stats)
        out["statuses"] = {str(k): v for k, v in sorted(_stats["statuses"].items())}
        out["by_operation"] = {
            op: {str(k): v for k, v in sorted(c.items())} for op, c in sorted(_stats["by_operation"].items())
        }
        out["error_codes"] = dict(sorted(_stats["error_codes"].items()))
        out["confirm_kinds"] = dict(sorted(_stats["confirm_kinds"].items()))
        out["bad_request_messages"] = dict(_stats["bad_request_messages"].most_common(40))
        out["orders_known"] = len(_orders)
    with open(STATS_PATH, "w") as f:
        json.dump(out, f, indent=2)
