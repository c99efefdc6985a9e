"""Signs confirm requests as the payment backend does: Standard Webhooks.

    webhook-id:        the message id
    webhook-timestamp: unix seconds
    webhook-signature: v1,<base64(HMAC-SHA256(key, "{id}.{timestamp}.{raw body}"))>

The key is the base64 decoding of what follows `whsec_` in a secret;
CONFIRM_SECRET may hold several secrets separated by spaces (rotation), and
the first one signs. Stdlib only, so every script (and schemathesis' hooks)
can import it.

    from webhook_sign import DEV_SECRET, confirm_body, webhook_headers
    body = confirm_body(order_id, "pi_123", ["A-1-5"])
    headers = webhook_headers(body)                 # signed with DEV_SECRET, now
"""

import base64
import hashlib
import hmac
import json
import time
import uuid

# The development secret: `make dev`, the tests and the scripts use it when
# CONFIRM_SECRET is unset. The key is b"seatclaim-local-dev-key-NOT-FOR-PRODUCTION".
# Never deploy it.
DEV_SECRET = "whsec_c2VhdGNsYWltLWxvY2FsLWRldi1rZXktTk9ULUZPUi1QUk9EVUNUSU9O"
PREFIX = "whsec_"


def secret_key(secret: str) -> bytes:
    """The HMAC key of the first secret in `secret` (`whsec_<base64>`, or
    several separated by spaces)."""
    first = secret.split()[0]
    if not first.startswith(PREFIX):
        raise ValueError("a Standard Webhooks secret starts with whsec_")
    return base64.b64decode(first[len(PREFIX):], validate=True)


def signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256>` over `{id}.{timestamp}.{body}`."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    mac = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def webhook_headers(body: bytes, secret: str = DEV_SECRET, msg_id: str | None = None,
                    timestamp: int | None = None) -> dict:
    """The three Standard Webhooks headers (lower case, as API Gateway hands
    them over) for `body`, the exact bytes that are sent."""
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    timestamp = int(time.time()) if timestamp is None else int(timestamp)
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": signature(secret, msg_id, timestamp, body)}


def confirm_body(order_id: str, payment_id: str, seats: list, ga: list | None = None) -> bytes:
    """A confirm body naming exactly what was paid for (compact JSON)."""
    body = {"orderId": order_id, "paymentId": payment_id, "seats": list(seats)}
    if ga:
        body["ga"] = ga
    return json.dumps(body, separators=(",", ":")).encode()


def resign_confirm_event(event: dict, seats: list, payment_id: str | None = None, secret: str = DEV_SECRET) -> dict:
    """An API Gateway (v2.0) confirm event, such as events/confirm.json, made
    current: its body names the order of its path, `seats` and `payment_id`
    (default: the body's own paymentId), signed now (a sample's fixed past
    timestamp is outside the 300 s tolerance), content-length to match.
    Edits `event` in place and returns it."""
    if payment_id is None:
        payment_id = json.loads(event["body"])["paymentId"]
    body = confirm_body(event["pathParameters"]["orderId"], payment_id, seats)
    headers = {k: v for k, v in event.get("headers", {}).items()
               if k.lower() not in ("webhook-id", "webhook-timestamp", "webhook-signature", "content-length")}
    headers.update(webhook_headers(body, secret))
    headers["content-length"] = str(len(body))
    event.update(headers=headers, body=body.decode(), isBase64Encoded=False)
    return event
