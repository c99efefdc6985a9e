"""template.yaml as CloudFormation deploys it, written as JSON to the path given.

SAM's transform (AWS::Serverless-2016-10-31) turns each function into a
role, a function and its event sources; the roles SAM writes exist only in
its output. This runs that transform offline with samtranslator, the library
the SAM CLI ships and the transform's published implementation (installed
with the SAM CLI in .tools/venv): the IAM test (testkit/tests/iam/built.rs)
then reads every role and policy in it. Local CodeUri paths become S3 URIs,
as `sam validate` does; no AWS call is made (the template names no managed
policy for SAM to look up, which the IAM tests hold it to).

    .tools/venv/bin/python scripts/built_template.py <out.json>
"""

import json
import sys
from pathlib import Path

from boto3.session import Session
from samtranslator.parser import parser
from samtranslator.translator.translator import Translator
from samtranslator.yaml_helper import yaml_parse

ROOT = Path(__file__).resolve().parent.parent


def built(template: dict) -> dict:
    for name, resource in template.get("Resources", {}).items():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource.setdefault("Properties", {})["CodeUri"] = f"s3://built-template/{name}"
    translator = Translator(
        managed_policy_map={},
        sam_parser=parser.Parser(),
        plugins=[],
        boto_session=Session(region_name="us-east-1"),
    )
    return translator.translate(
        sam_template=template, parameter_values={}, get_managed_policy_map=lambda: {}
    )


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    template = yaml_parse((ROOT / "template.yaml").read_text())
    out = Path(sys.argv[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(built(template), indent=1, default=str))


if __name__ == "__main__":
    main()
