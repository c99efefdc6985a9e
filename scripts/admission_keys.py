#!/usr/bin/env python3
"""Makes a new admission signing key: a P-256 key pair as JWK Sets.

Prints two JSON lines: the private set (for ADMISSION_SIGNING_KEYS, i.e. the
Secrets Manager secret queue-visitors reads) and the public set (for
ADMISSION_VERIFY_KEYS, the SSM parameter create-order and the JWKS read).

Rotation is two deploys (docs/OPERATIONS.md, "Admission keys"), so that no
verifier holding a cached JWKS meets an admission signed by a key it has not
seen:
1. --rotate-from: the new key is published, after the current ones in both
   sets, so the JWKS carries it while the current key still signs;
2. at least the JWKS's max-age (300 s) after that deploy, --promote moves it
   first in the private set, and it signs from the next deploy on.
Uses `cryptography` (in .tools/venv with the SAM CLI).

    .tools/venv/bin/python scripts/admission_keys.py --kid 2026-12
    .tools/venv/bin/python scripts/admission_keys.py --kid 2027-01 \\
        --rotate-from private.json public.json
    .tools/venv/bin/python scripts/admission_keys.py --promote 2027-01 private.json
"""
import argparse
import base64
import json

from cryptography.hazmat.primitives.asymmetric import ec


def b64(n: int) -> str:
    return base64.urlsafe_b64encode(n.to_bytes(32, "big")).rstrip(b"=").decode()


def new_key(kid: str):
    private = ec.generate_private_key(ec.SECP256R1())
    numbers = private.private_numbers()
    public = {"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
              "x": b64(numbers.public_numbers.x), "y": b64(numbers.public_numbers.y)}
    return dict(public, d=b64(numbers.private_value)), public


def promote(kid, private_path):
    """The private set with `kid` first (it signs); prints it."""
    keys = json.load(open(private_path))["keys"]
    first = [k for k in keys if k.get("kid") == kid]
    if not first:
        raise SystemExit(f"no key {kid!r} in {private_path}")
    print(json.dumps({"keys": first + [k for k in keys if k.get("kid") != kid]},
                     separators=(",", ":")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kid", help="the new key's id, e.g. the month it starts signing")
    parser.add_argument("--rotate-from", nargs=2, metavar=("PRIVATE", "PUBLIC"),
                        help="the current sets' files: the new key is published after their keys")
    parser.add_argument("--promote", nargs=2, metavar=("KID", "PRIVATE"),
                        help="print the private set with KID first (step two of a rotation)")
    args = parser.parse_args()
    if args.promote:
        return promote(*args.promote)
    if not args.kid:
        parser.error("--kid is required")
    private, public = new_key(args.kid)
    private_set, public_set = {"keys": [private]}, {"keys": [public]}
    if args.rotate_from:
        old_private, old_public = (json.load(open(path)) for path in args.rotate_from)
        private_set["keys"] = old_private["keys"] + private_set["keys"]
        public_set["keys"] = old_public["keys"] + public_set["keys"]
    print(json.dumps(private_set, separators=(",", ":")))
    print(json.dumps(public_set, separators=(",", ":")))


if __name__ == "__main__":
    main()
