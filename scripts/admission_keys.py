#!/usr/bin/env python3
"""Makes a new admission signing key: a P-256 key pair as JWK Sets.

Prints two JSON lines: the private set (for ADMISSION_SIGNING_KEYS, i.e. the
Secrets Manager secret queue-visitors reads) and the public set (for
ADMISSION_VERIFY_KEYS, the SSM parameter create-order and the JWKS read).
With --rotate-from, the new key goes first and the old sets' keys follow,
so the new key signs while admissions the old one signed still verify
(docs/OPERATIONS.md, "Admission keys"). Uses `cryptography` (in
.tools/venv with the SAM CLI).

    .tools/venv/bin/python scripts/admission_keys.py --kid 2026-12
    .tools/venv/bin/python scripts/admission_keys.py --kid 2027-01 \\
        --rotate-from private.json public.json
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kid", required=True, help="the new key's id, e.g. the month it starts signing")
    parser.add_argument("--rotate-from", nargs=2, metavar=("PRIVATE", "PUBLIC"),
                        help="the current sets' files: their keys follow the new one")
    args = parser.parse_args()
    private, public = new_key(args.kid)
    private_set, public_set = {"keys": [private]}, {"keys": [public]}
    if args.rotate_from:
        old_private, old_public = (json.load(open(path)) for path in args.rotate_from)
        private_set["keys"] += old_private["keys"]
        public_set["keys"] += old_public["keys"]
    print(json.dumps(private_set, separators=(",", ":")))
    print(json.dumps(public_set, separators=(",", ":")))


if __name__ == "__main__":
    main()
