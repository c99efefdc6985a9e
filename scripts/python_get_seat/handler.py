"""get-seat in Python, for the cold-start comparison only (never deployed).

scripts/bench_cold_start.py runs this under the same Runtime Interface
Emulator as the Rust binaries, through the Python runtime interface client:
`aws-lambda-rie-x86_64 ... python -m awslambdaric handler.handler`.

It does what the Rust get-seat does (shared/src/store/holds.rs `claim_seat`,
keys from shared/src/store/items/seat.rs): the hold token's MAC checked
under `HOLD_TOKEN_KEYS` before any request (shared/src/auth/hold_token.rs),
then one `TransactWriteItems` with no read before it: the conditional claim on the
seat item plus the order's conditional update (token hash, PENDING,
unexpired, room for one more seat), and the same reading of
`CancellationReasons` to pick the error. The boto3 client is built once per
sandbox, at import (the INIT phase), like the Rust `App::from_env`.
"""
import base64
import hashlib
import hmac
import json
import os
import re
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

TABLE = os.environ["TABLE_NAME"]
MAX_SEATS = int(os.environ.get("MAX_SEATS_PER_ORDER", "10"))
# AWS_ENDPOINT_URL_DYNAMODB (DynamoDB Local) is honoured by botocore itself.
DDB = boto3.client("dynamodb", config=Config(retries={"mode": "standard"}))

ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
# Every key verifies; the first signs (shared/src/auth/hold_token.rs).
HOLD_KEYS = [base64.b64decode(k) for k in os.environ["HOLD_TOKEN_KEYS"].split()]
HOLD_TOKEN_LABEL = "seatclaim hold token v1"


def reply(status, body):
    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def error(status, code, message):
    return reply(status, {"error": code, "message": message})


def token_mac(key, order_id, unsigned):
    """The MAC over the label, the order id and the token's parts, each
    followed by a zero byte."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    for part in (HOLD_TOKEN_LABEL, order_id, unsigned):
        mac.update(part.encode() + b"\0")
    return mac.digest()


def parse_token(headers, order_id):
    """`event~expires~secret~mac`, its MAC verified for `order_id` under
    every key (constant time): (secret, event id, expiry) or None."""
    value = (headers or {}).get("authorization", "").strip()
    scheme, _, raw = value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    unsigned, _, mac = raw.strip().rpartition("~")
    parts = unsigned.split("~")
    if len(parts) != 3 or not ID.match(parts[0]) or not parts[1].isdigit() or not HEX64.match(parts[2]):
        return None
    if not HEX64.match(mac):
        return None
    given = bytes.fromhex(mac)
    verified = False
    for key in HOLD_KEYS:
        verified |= hmac.compare_digest(token_mac(key, order_id, unsigned), given)
    if not verified:
        return None
    return parts[2].lower(), parts[0], int(parts[1])


def token_hash(secret_hex):
    """What the order stores: the SHA-256 of the token's random part, as hex."""
    return hashlib.sha256(secret_hex.encode()).hexdigest()


SEAT_BLOCK_SIZE = 10


def seat_block_pk(event_id, seat_id):
    ref = hashlib.sha256(event_id.encode()).hexdigest()[:20]
    row, _, number = seat_id.rpartition("-")
    if row and number.isdigit() and int(number) >= 1:
        return f"SEATS#{ref}#{row}#{(int(number) - 1) // SEAT_BLOCK_SIZE}"
    return f"SEATS#{ref}#{seat_id}#-"


def claim(order_id, seat_id, token, event_id, expires_at, now):
    seat_update = {
        "TableName": TABLE,
        # The seat's block: SEATS#{first 20 hex digits of SHA-256(eventId)}#{section}-{row}#{(n-1)//10}
        # (shared/src/store/items/seat.rs, seat_block_pk).
        "Key": {"PK": {"S": seat_block_pk(event_id, seat_id)},
                "SK": {"S": f"SEAT#{seat_id}"}},
        "UpdateExpression": "SET #status = :held, #holder = :order, #holdExp = :exp",
        "ConditionExpression": "attribute_exists(PK) AND #status <> :sold AND "
                               "(attribute_not_exists(#holder) OR #holder = :order OR #holdExp < :now)",
        "ExpressionAttributeNames": {"#status": "status", "#holder": "holderOrderId", "#holdExp": "holdExpiresAt"},
        "ExpressionAttributeValues": {
            ":held": {"S": "HELD"}, ":sold": {"S": "SOLD"}, ":order": {"S": order_id},
            ":exp": {"N": str(expires_at)}, ":now": {"N": str(now)},
        },
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    order_update = {
        "TableName": TABLE,
        "Key": {"PK": {"S": f"ORDER#{order_id}"}, "SK": {"S": "ORDER"}},
        "UpdateExpression": "ADD #seats :seat, #version :one",
        "ConditionExpression": "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending "
                               "AND #expiresAt = :exp AND #deadline > :now "
                               "AND (attribute_not_exists(#seats) OR size(#seats) < :max OR contains(#seats, :seatId))",
        "ExpressionAttributeNames": {"#seats": "seats", "#version": "version", "#tokenHash": "tokenHash",
                                     "#status": "status", "#expiresAt": "expiresAt",
                                     "#deadline": "holderDeadline"},
        "ExpressionAttributeValues": {
            ":seat": {"SS": [seat_id]}, ":seatId": {"S": seat_id}, ":one": {"N": "1"},
            ":tokenHash": {"S": token_hash(token)}, ":pending": {"S": "PENDING"},
            ":exp": {"N": str(expires_at)}, ":now": {"N": str(now)}, ":max": {"N": str(MAX_SEATS)},
        },
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    DDB.transact_write_items(TransactItems=[{"Update": seat_update}, {"Update": order_update}])


def cancelled(err, token_hash, now):
    """The error reply for a cancelled transaction, as the Rust handler picks it."""
    reasons = err.response.get("CancellationReasons") or []
    seat, order = (reasons + [{}, {}])[:2]
    if order.get("Code") == "ConditionalCheckFailed":
        old = order.get("Item")
        if not old:
            return error(404, "order-not-found", "No such order.")
        if old.get("tokenHash", {}).get("S") != token_hash:
            return error(401, "unauthorized", "The hold token does not match this order.")
        if old.get("status", {}).get("S") != "PENDING" or int(old.get("holderDeadline", {}).get("N", "0")) <= now:
            return error(409, "order-not-holdable", "The order can no longer hold seats.")
    if seat.get("Code") == "ConditionalCheckFailed":
        old = seat.get("Item")
        if not old:
            return error(404, "seat-not-found", "No such seat.")
        if old.get("status", {}).get("S") == "SOLD":
            return error(409, "seat-sold", "The seat is sold.")
        return error(409, "seat-held", "The seat is held by another order.")
    if seat.get("Code") == "TransactionConflict":
        return error(409, "seat-held", "The seat is being claimed by another order.")
    if order.get("Code") == "ConditionalCheckFailed":
        return error(422, "seat-limit", f"An order holds at most {MAX_SEATS} seats.")
    return error(503, "store-unavailable", "The store is unavailable; retry.")


def handler(event, context):
    started = time.time()
    params = event.get("pathParameters") or {}
    order_id, seat_id = params.get("orderId", ""), params.get("seatId", "")
    if not ID.match(order_id) or not ID.match(seat_id):
        result = error(400, "bad-request", "Malformed order or seat id.")
    else:
        token = parse_token(event.get("headers"), order_id)
        if token is None:
            result = error(401, "unauthorized", "A hold token is required.")
        else:
            secret, event_id, expires_at = token
            now = int(time.time() * 1000)
            try:
                claim(order_id, seat_id, secret, event_id, expires_at, now)
                expires = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(expires_at / 1000))
                result = reply(200, {"orderId": order_id, "seatId": seat_id, "status": "HELD",
                                     "expiresAt": f"{expires}.{expires_at % 1000:03d}Z"})
            except ClientError as err:
                if err.response.get("Error", {}).get("Code") == "TransactionCanceledException":
                    result = cancelled(err, token_hash(secret), now)
                else:
                    result = error(503, "store-unavailable", "The store is unavailable; retry.")
            except BotoCoreError:
                result = error(503, "store-unavailable", "The store is unavailable; retry.")
    # One JSON log line per request, like the Rust functions.
    print(json.dumps({"fn": "get-seat-python", "status": result["statusCode"], "orderId": order_id,
                      "seatId": seat_id, "ms": round((time.time() - started) * 1000, 2)}), file=sys.stdout, flush=True)
    return result
