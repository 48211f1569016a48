"""cfn-lint's serverless rule set (cfn-lint-serverless) beside cfn-lint, checkov and ``sam validate --lint``.

Zero findings, and every suppression is a decision written down: each
``ignore_checks`` entry in template.yaml's ``Metadata: cfn-lint: config`` has a
comment right above it that names the rule and says why.
"""

import re

from cfnlint.api import ManualArgs, lint_file

from ops.template import TEMPLATE_PATH, load_template

SERVERLESS_RULES = "cfn_lint_serverless.rules"


def test_serverless_rules_find_nothing():
    matches = lint_file(
        TEMPLATE_PATH,
        ManualArgs(regions=["us-east-1", "us-west-2", "eu-west-1"], append_rules=[SERVERLESS_RULES]),
    )
    assert [str(m) for m in matches] == []


def test_serverless_rules_are_loaded(tmp_path):
    # A template with the problems the rules exist for: without the plugin this finds nothing.
    bare = tmp_path / "probe.yaml"
    bare.write_text(
        "Resources:\n"
        "  Queue:\n"
        "    Type: AWS::SQS::Queue\n"
        "  Fn:\n"
        "    Type: AWS::Lambda::Function\n"
        "    Properties:\n"
        "      Runtime: python3.13\n"
        "      Handler: app.handler\n"
        "      Role: arn:aws:iam::123456789012:role/r\n"
        "      Code: {ZipFile: 'def handler(e, c): pass'}\n"
    )
    found = {m.rule.id for m in lint_file(bare, ManualArgs(append_rules=[SERVERLESS_RULES]))}
    assert {"ES6000", "WS1004"} <= found


def _suppressions() -> dict[str, list[str]]:
    resources = load_template()["Resources"]
    return {
        name: resource.get("Metadata", {}).get("cfn-lint", {}).get("config", {}).get("ignore_checks") or []
        for name, resource in resources.items()
        if resource.get("Metadata", {}).get("cfn-lint")
    }


def test_every_suppression_is_justified_inline():
    lines = TEMPLATE_PATH.read_text().splitlines()
    suppressed = [rule for rules in _suppressions().values() for rule in rules]
    unjustified = []
    for rule in suppressed:
        # The entry, and the comment block right above it, which must start by naming the rule.
        for index, line in enumerate(lines):
            if line.strip() == f"- {rule}":
                comment = []
                above = index - 1
                while lines[above].strip().startswith("#"):
                    comment.insert(0, lines[above].strip().lstrip("# "))
                    above -= 1
                text = " ".join(comment)
                if not re.match(rf"{rule} \(.+\): \S", text) or len(text) < 60:
                    unjustified.append(f"{rule}: {text!r}")
    assert suppressed, "no cfn-lint suppression found: the parse of template.yaml's Metadata broke"
    assert unjustified == []
