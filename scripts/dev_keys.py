"""The development keys, as make dev uses them: the admission key
(local/dev-admission-signing-keys.json), the private JWK Set for
ADMISSION_SIGNING_KEYS and its public half for ADMISSION_VERIFY_KEYS; and
the hold token key (local/dev-hold-token-keys.txt) for HOLD_TOKEN_KEYS;
the buyer key (local/dev-buyer-signing-keys.json) for BUYER_VERIFY_KEYS;
and the development secrets' ARNs (local/dev-secret-arns.json), which the
dev server's Secrets Manager stand-in serves; and Stripe's signing secret
(local/dev-stripe-webhook-secret.txt) for STRIPE_WEBHOOK_SECRET. Never
deployed."""
import json
from pathlib import Path

LOCAL = Path(__file__).resolve().parent.parent / "local"
KEYS_FILE = LOCAL / "dev-admission-signing-keys.json"
HOLD_KEYS_FILE = LOCAL / "dev-hold-token-keys.txt"
DRAW_SECRET_FILE = LOCAL / "dev-draw-secret.txt"
BUYER_KEYS_FILE = LOCAL / "dev-buyer-signing-keys.json"
# The issuer of make dev's buyer tokens (local::apps::DEV_BUYER_ISSUER).
DEV_BUYER_ISSUER = "seatclaim-dev"
SECRET_ARNS_FILE = LOCAL / "dev-secret-arns.json"
STRIPE_SECRET_FILE = LOCAL / "dev-stripe-webhook-secret.txt"


def dev_admission_keys():
    """(signing, verify): the two JWK Sets as JSON text."""
    signing = json.loads(KEYS_FILE.read_text())
    public = {"keys": [{k: v for k, v in key.items() if k != "d"} for key in signing["keys"]]}
    return json.dumps(signing, separators=(",", ":")), json.dumps(public, separators=(",", ":"))


def dev_buyer_keys():
    """(signing, verify): the development buyer key's private JWK Set (the
    seller's sign-in's, as /_dev/buyer-token signs) and its public half,
    BUYER_VERIFY_KEYS."""
    signing = json.loads(BUYER_KEYS_FILE.read_text())
    public = {"keys": [{k: v for k, v in key.items() if k != "d"} for key in signing["keys"]]}
    return json.dumps(signing, separators=(",", ":")), json.dumps(public, separators=(",", ":"))


def dev_draw_secret():
    """DRAW_SECRET of make dev: one base64 key."""
    return DRAW_SECRET_FILE.read_text().strip()


def dev_hold_token_keys():
    """HOLD_TOKEN_KEYS of make dev: one base64 key."""
    return HOLD_KEYS_FILE.read_text().strip()


def dev_stripe_secret():
    """STRIPE_WEBHOOK_SECRET of make dev: one whsec_ string, used as it is."""
    return STRIPE_SECRET_FILE.read_text().strip()


def dev_secret_arns():
    """{variable: ARN} of the development secrets the dev server serves."""
    return json.loads(SECRET_ARNS_FILE.read_text())
