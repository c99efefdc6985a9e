"""Schemathesis hooks for scripts/fuzz_api.py (loaded via SCHEMATHESIS_HOOKS).

- Order routes: most cases are pointed at real orders (seeded ones and any
  the fuzzer itself created) with their real hold tokens, and get-seat /
  drop-seat often at real seats, so the deep paths run (claims, conflicts,
  seat-limit, not-holdable), not only 400/401/404.
- Confirm: most requests are signed with the development secret over the
  exact raw body that is sent, so the paths behind the signature run too.
- Every request's status is tallied; the totals are written to FUZZ_STATS
  at exit for the summary.
"""

import atexit
import collections
import hashlib
import hmac
import json
import os
import random
import threading

import schemathesis
from hypothesis import strategies as st

SECRET = os.environ.get("FUZZ_CONFIRM_SECRET", "seatclaim-local-development-secret-do-not-deploy").encode()
SEEDS = json.load(open(os.environ["FUZZ_SEEDS"])) if os.environ.get("FUZZ_SEEDS") else {"orders": [], "seats": ["A-1-1"]}
STATS_PATH = os.environ.get("FUZZ_STATS")

_lock = threading.Lock()
# [orderId, holdToken] pairs: the seeded orders plus every order created during the run.
_orders = [[o["orderId"], o["holdToken"]] for o in SEEDS["orders"]]
_tokens = {o: t for o, t in _orders}
_seats = list(SEEDS["seats"])
_stats = {
    "requests": 0,
    "failed_requests": 0,
    "statuses": collections.Counter(),
    "by_operation": collections.defaultdict(collections.Counter),
    "server_errors": [],
    "error_codes": collections.Counter(),
    "bad_request_messages": collections.Counter(),
    "signed_confirms": 0,
}


def _operation(case):
    return f"{case.method.upper()} {case.path}"


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


@schemathesis.hook
def flatmap_case(context, case):
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


@schemathesis.hook
def before_call(context, case, kwargs):
    # Stateful links hand over real order ids but no token (it travels in a
    # header): most of the time, send the order's own token.
    order_id = case.path_parameters.get("orderId") if case.path_parameters else None
    token = _tokens.get(order_id) if isinstance(order_id, str) else None
    if token and case.path != "/orders/{orderId}/confirm" and random.random() < 0.8:
        case.headers["Authorization"] = f"Bearer {token}"
    if case.path == "/orders/{orderId}/confirm" and random.random() < 0.85:
        try:
            raw = _raw_body(case)
        except (TypeError, ValueError):
            return  # not JSON-serialisable: leave it to schemathesis, unsigned
        kwargs["data"] = raw
        case.headers["Content-Type"] = "application/json"
        case.headers["X-Signature"] = "sha256=" + hmac.new(SECRET, raw, hashlib.sha256).hexdigest()
        with _lock:
            _stats["signed_confirms"] += 1


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
        out["bad_request_messages"] = dict(_stats["bad_request_messages"].most_common(40))
        out["orders_known"] = len(_orders)
    with open(STATS_PATH, "w") as f:
        json.dump(out, f, indent=2)
