#!/usr/bin/env python3
"""Checks `sam build`'s output: every function of template.yaml has a
bootstrap that is an arm64 (aarch64) ELF executable and is *its own*
binary — the tokio::main expansion embeds `functions/src/bin/<name>.rs` as a
panic location, so a template pointing at the wrong binary is caught.
Prints a closing "N passed, N failed" line."""
import sys
from pathlib import Path

from samcli.yamlhelper import yaml_parse

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / ".aws-sam" / "build"
EM_AARCH64 = 183


def main():
    template = yaml_parse((ROOT / "template.yaml").read_text())
    functions = {
        name: res["Metadata"]["BuildProperties"]["Binary"]
        for name, res in template["Resources"].items()
        if res["Type"] == "AWS::Serverless::Function"
    }
    passed = failed = 0
    for resource, crate in sorted(functions.items()):
        bootstrap = BUILD / resource / "bootstrap"
        problems = []
        if not bootstrap.is_file():
            problems.append("no bootstrap")
        else:
            data = bootstrap.read_bytes()
            if data[:4] != b"\x7fELF":
                problems.append("not an ELF file")
            elif int.from_bytes(data[18:20], "little") != EM_AARCH64:
                problems.append("not arm64")
            if f"functions/src/bin/{crate}.rs".encode() not in data:
                problems.append(f"is not the {crate} binary")
            others = [c for c in functions.values() if c != crate and f"functions/src/bin/{c}.rs".encode() in data]
            if others:
                problems.append(f"contains {others}")
            size = len(data) / 1e6
        status = "ok" if not problems else "FAILED: " + ", ".join(problems)
        detail = f" ({size:.1f} MB)" if bootstrap.is_file() else ""
        print(f"sam build {resource} -> {crate}: {status}{detail}")
        passed, failed = (passed + 1, failed) if not problems else (passed, failed + 1)
    print(f"sam build check: {passed} passed, {failed} failed")
    sys.exit(1 if failed or passed != len(functions) else 0)


if __name__ == "__main__":
    main()
