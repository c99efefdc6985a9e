"""cargo's target directory, as cargo itself reports it.

Every script that runs a binary cargo built finds it here, never under a
hard-coded `target/`: cargo alone knows where it puts its output
(CARGO_TARGET_DIR, relative to the directory cargo runs in; `build.target-dir`
in a .cargo/config.toml; else the workspace's target/). The answer comes
from `cargo metadata --format-version 1 --no-deps`, run in the repository
root like the Makefile's cargo commands; it needs no network and no build.

    from cargo_target import binary, target_dir
    binary("seatclaim-dev")               # <target>/debug/seatclaim-dev
    binary("get-seat", "release")         # <target>/release/get-seat

From a shell: `python3 scripts/cargo_target.py` prints the directory, and
`python3 scripts/cargo_target.py debug seatclaim-dev` a binary's path.
"""

import functools
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def target_dir() -> Path:
    """The workspace's target directory (absolute)."""
    try:
        out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise SystemExit("cargo is not on PATH: it is needed to find its target directory") from None
    except subprocess.CalledProcessError as err:
        raise SystemExit(f"`cargo metadata` failed ({err.returncode}):\n{err.stderr.strip()}") from None
    return Path(json.loads(out)["target_directory"])


def binary(name: str, profile: str = "debug") -> Path:
    """The path of a binary cargo built with `profile` (debug or release)."""
    return target_dir() / profile / name


if __name__ == "__main__":
    if len(sys.argv) == 1:
        print(target_dir())
    elif len(sys.argv) == 3:
        print(binary(sys.argv[2], sys.argv[1]))
    else:
        raise SystemExit("usage: cargo_target.py [PROFILE BINARY]")
