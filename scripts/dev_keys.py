"""The development admission key (local/dev-admission-signing-keys.json), as
make dev uses it: the private JWK Set for ADMISSION_SIGNING_KEYS and its
public half for ADMISSION_VERIFY_KEYS. Never deployed."""
import json
from pathlib import Path

KEYS_FILE = Path(__file__).resolve().parent.parent / "local" / "dev-admission-signing-keys.json"


def dev_admission_keys():
    """(signing, verify): the two JWK Sets as JSON text."""
    signing = json.loads(KEYS_FILE.read_text())
    public = {"keys": [{k: v for k, v in key.items() if k != "d"} for key in signing["keys"]]}
    return json.dumps(signing, separators=(",", ":")), json.dumps(public, separators=(",", ":"))
