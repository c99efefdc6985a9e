"""The dev server (seatclaim-dev from cargo's target directory, DynamoDB
Local included) started on ports of the caller's choosing and stopped with
SIGINT, for the scripts that drive it (the fuzz run, the doc snippets)."""

import os
import signal
import subprocess
import time
from pathlib import Path

from cargo_target import binary

ROOT = Path(__file__).resolve().parent.parent
START_SECONDS = 90


def start(port: int, dynamodb_port: int, log_path: Path, who: str, env_extra: dict) -> subprocess.Popen:
    """Starts it with `env_extra` over this process's environment and
    returns once it listens; exits naming `who` if it does not."""
    env = dict(os.environ, PORT=str(port), DYNAMODB_LOCAL_PORT=str(dynamodb_port), **env_extra)
    env.setdefault("RUST_LOG", "info")
    log = open(log_path, "wb")
    proc = subprocess.Popen([str(binary("seatclaim-dev"))], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{who}: the dev server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        if b"listening on" in log_path.read_bytes():
            return proc
        time.sleep(0.2)
    stop(proc)
    raise SystemExit(f"{who}: the dev server did not start in {START_SECONDS} s:\n{log_path.read_text()[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
