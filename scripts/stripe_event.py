"""Stripe webhooks for the scripts: a request such as events/stripe-payment.json
signed now by Stripe's own Node library (scripts/stripe_sign.js), as Stripe
would send it, never by our code.

    from stripe_event import resign_stripe_event
    resign_stripe_event(event)          # signed now with make dev's secret
"""
import os
import subprocess
import time
from pathlib import Path

from dev_keys import dev_stripe_secret

SIGNER = Path(__file__).resolve().parent / "stripe_sign.js"


def stripe_signature(body: str, secret: str, timestamp: int) -> str:
    """The `Stripe-Signature` Stripe's library makes for `body` at `timestamp`."""
    env = dict(os.environ, STRIPE_SIGN_SECRET=secret, STRIPE_SIGN_TIMESTAMP=str(timestamp))
    return subprocess.run(["node", str(SIGNER)], input=body, capture_output=True, text=True,
                          check=True, env=env).stdout


def resign_stripe_event(event: dict, secret: str | None = None) -> dict:
    """An API Gateway (v2.0) Stripe event made current: its body (as it is,
    the order it names already replaced) signed now (a sample's fixed past
    timestamp is outside the 300 s tolerance), content-length to match.
    Edits `event` in place and returns it."""
    body = event["body"]
    headers = dict(event.get("headers", {}))
    headers["stripe-signature"] = stripe_signature(body, secret or dev_stripe_secret(), int(time.time()))
    headers["content-length"] = str(len(body.encode()))
    event.update(headers=headers, isBase64Encoded=False)
    return event
