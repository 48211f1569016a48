"""The README's commands and text, checked without running them; no link points outside the repo.

- Every ``make`` command the README shows (code blocks and inline code)
  names a real target, and its ``ARGS`` are accepted by the command-line
  parser the target runs (found through ``make -n``, so a renamed option or
  module fails here).
- The demo report shown has the lines the demo prints.
- Every relative link in README.md and docs/ resolves inside the repository,
  and no tracked file points at the workspace outside it.

The examples that are safe on any machine (``make mail`` against a real ``make serve``, every
``make invoke`` line, the ``--env-vars`` file shown) run end to end in
``tests/e2e/test_readme_examples.py``.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from devstack.demo import DemoReport

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "replyonce" / "replyonce"
README = (ROOT / "README.md").read_text()
# The pages the README sends a person to for the commands it does not repeat, and the one list of
# variables: their commands and examples are held to the same checks.
DEVELOPMENT = (ROOT / "docs" / "development.md").read_text()
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()
GUIDES = README + "\n" + DEVELOPMENT
MAKE = shutil.which("make")


def code_blocks(text: str, language: str) -> list[str]:
    """The fenced blocks tagged ``language`` (``""``: untagged), fences paired in order.

    A fence may be indented (a block inside a numbered step); its lines lose that indentation.
    """
    blocks, current, tag, indent = [], None, "", 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            if current is None:
                current, tag, indent = [], line.strip()[3:].strip(), len(line) - len(line.lstrip())
            else:
                if tag == language:
                    blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line[indent:] if line[:indent].strip() == "" else line)
    return blocks


def block_commands(text: str) -> list[str]:
    """The ``make ...`` lines of bash blocks (comments dropped): the commands given to be typed."""
    commands = []
    for block in code_blocks(text, "bash"):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if re.match(r"^(\w+=\S+ )*make\b", line):
                commands.append(line)
    return commands


def make_commands(text: str) -> list[str]:
    """Every ``make ...`` command: lines of bash blocks and inline code spans."""
    commands = block_commands(text)
    fenced = {
        line.strip()
        for tag in ("", "bash", "json")
        for block in code_blocks(text, tag)
        for line in block.splitlines()
    }
    without_blocks = "\n".join(line for line in text.splitlines() if line.strip() not in fenced)
    for span in re.findall(r"`([^`\n]+)`", without_blocks):
        if re.match(r"^(\w+=\S+ )*make\b", span):
            commands.append(span)
    return sorted(set(commands))


def split_make(command: str) -> tuple[str | None, dict[str, str]]:
    """``(target, variables)`` of a make command line (``None``: no target, the default goal)."""
    words = shlex.split(command)
    words = words[words.index("make") + 1 :]
    variables = dict(word.split("=", 1) for word in words if "=" in word)
    targets = [word for word in words if "=" not in word]
    assert len(targets) <= 1, command
    return (targets[0] if targets else None), variables


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-zA-Z][\w-]*):", (ROOT / "Makefile").read_text(), re.MULTILINE))


# What make hands the commands it runs (pytest, under `make pytest ARGS=...`): the variables given on its
# command line. A README command is typed at a shell, so it is run without them (an ARGS meant for pytest
# would otherwise become every README command's ARGS).
_MAKE_ENVIRONMENT = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "ARGS")


def shell_environment() -> dict[str, str]:
    """This process's environment as a shell has it, without what an enclosing make passed down."""
    return {name: value for name, value in os.environ.items() if name not in _MAKE_ENVIRONMENT}


def module_command(target: str, variables: dict[str, str]) -> list[str] | None:
    """The ``python -m MODULE ARGV...`` the target runs, from ``make -n`` (``None``: no Python module)."""
    assigned = [f"{name}={value}" for name, value in variables.items()]
    dry_run = subprocess.run(  # noqa: S603 - make with our own arguments
        [MAKE, "--no-print-directory", "-n", target, *assigned, "VENV=/nonexistent-venv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=shell_environment(),
    ).stdout
    runs = [line for line in dry_run.splitlines() if re.search(r" -m (?!venv |pip )", line)]
    if not runs:
        return None
    words = shlex.split(runs[-1])
    return words[words.index("-m") + 1 :]


# Runs ``python -m MODULE ARGV`` with argparse's parse_args replaced by "parse, then leave at once":
# os._exit(0) cannot be caught, so nothing past the parser ever runs (no chaos run, no deploy).
_PARSE_ONLY = """
import argparse, os, runpy, sys
original = argparse.ArgumentParser.parse_args
def parse_then_leave(self, args=None, namespace=None):
    original(self, args, namespace)
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
argparse.ArgumentParser.parse_args = parse_then_leave
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
os._exit(3)  # the module finished without parsing its arguments
"""


# Modules a target runs that take no arguments at all: they are not run here (they would do their work).
NO_ARGUMENTS = {"devstack.events"}


def parses(module: str, argv: list[str]) -> str | None:
    """``None`` if ``python -m module argv`` gets past its argument parser; else argparse's complaint."""
    if module in NO_ARGUMENTS:
        return None if not argv else f"{module} takes no arguments, got {argv}"
    result = subprocess.run(  # noqa: S603 - this interpreter, our own snippet
        [sys.executable, "-c", _PARSE_ONLY, module, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'replyonce'}"},
    )
    if result.returncode == 0:
        return None
    return result.stderr.strip() or f"exit {result.returncode}"


# The README's every command, and the ones docs/development.md gives to be typed (its prose names
# targets in passing, `make thread`, without the arguments they need).
COMMANDS = sorted({*make_commands(README), *block_commands(DEVELOPMENT)})


def test_the_readme_shows_the_daily_commands():
    targets = {split_make(command)[0] for command in COMMANDS}
    assert {"demo", "serve", "mail", "thread", "trigger", "invoke", "test", None} <= targets


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
@pytest.mark.parametrize("command", COMMANDS)
def test_every_make_command_in_the_readme_is_accepted(command):
    target, variables = split_make(command)
    if target is None:
        return  # `make` alone: tests/static/test_makefile.py checks it lists the targets
    assert target in makefile_targets(), f"{command}: no target {target!r} in the Makefile"
    argv = module_command(target, variables)
    if argv is None:
        return
    module, *args = argv
    if not (ROOT / module.split(".")[0]).is_dir():
        return  # a tool's own command line (pytest): its options are its own
    complaint = parses(module, args)
    assert complaint is None, f"{command}: {complaint}"


def _report_labels(report: str) -> list[str]:
    """The report's own lines (two-space indent): ``notifications``, ``skips by reason``, ``took`` ..."""
    return [
        re.match(r"  ([a-z][a-z -]*?)(?:\s{2,}|:|\s\d|$)", line).group(1)
        for line in report.splitlines()
        if re.match(r"  [a-z]", line)
    ]


def test_the_readmes_demo_report_has_the_lines_the_demo_prints():
    [sample] = [b for b in code_blocks(README, "") if b.startswith("ReplyOnce local demo")]
    report = DemoReport(
        skips={"own_outbound": 1},
        replies=[{"to": "a@example.com", "subject": "s", "answers": ["m"], "first_line": "f"}],
        violations={1: []},
    ).render()
    assert sample.splitlines()[0] == report.splitlines()[0]
    assert _report_labels(sample) == _report_labels(report)


DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_relative_link_resolves_inside_the_repository(document):
    for target in re.findall(r"\]\(([^)\s]+)\)", document.read_text()):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = (document.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"{document.name} links outside the repository: {target}"
        assert path.exists(), f"{document.name} links to a missing file: {target}"


def test_nothing_points_outside_the_repository():
    outside = re.compile(
        "|".join([re.escape("../" + "shared"), re.escape("/work/" + "shared"), r"(?<!docs/)DESIGN\.md"])
    )
    git = shutil.which("git")
    assert git is not None
    tracked = subprocess.run(  # noqa: S603 - git with our own arguments
        [git, "ls-files"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    offending = {
        name
        for name in tracked
        if (ROOT / name).is_file()
        and name != "tests/static/test_readme.py"
        and outside.search((ROOT / name).read_text(errors="ignore"))
    }
    assert offending == set()


def section(title: str) -> str:
    """The README's ``## title`` section, up to the next ``##`` heading."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.MULTILINE | re.DOTALL)
    assert found, f"the README has no section {title!r}"
    return found.group(1)


def test_the_readme_reads_in_the_order_a_new_user_goes():
    # What the product is, before any heading; then trying it, deploying it, and only then the internals.
    lead = README.split("\n## ", 1)[0]
    assert "reply **once**" in lead
    titles = re.findall(r"^## (.+)$", README, re.MULTILINE)
    order = ["Try it locally", "Deploy to your account and connect Nylas", "How it works"]
    assert titles[0] == order[0]
    assert [t for t in titles if t in order] == order
    # The deploy section in the order a user does it, each step with its command.
    deploy = section("Deploy to your account and connect Nylas")
    steps = re.findall(r"^\d\. \*\*(.+?)\.\*\*", deploy, re.MULTILINE)
    assert steps == [
        "Deploy",
        "Set the Nylas API key",
        "Register the webhook",
        "Confirm the alert email",
        "Send yourself a message",
    ]
    commands = ("make deploy", "make set-api-key", "make register-webhook")
    positions = [deploy.index(command) for command in commands]
    assert positions == sorted(positions)


def _ops_dry_run(argv: list[str], **environment: str) -> list[list[str]]:
    """The ``$ sam ...`` lines of ``python -m ops`` with no AWS configuration at all on this machine."""
    quiet = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    result = subprocess.run(  # noqa: S603 - this interpreter, our own command
        [sys.executable, "-m", "ops", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **quiet,
            "AWS_CONFIG_FILE": str(ROOT / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(ROOT / "no-aws-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'replyonce'}",
            **environment,
        },
    )
    assert result.returncode == 0, result.stderr
    return [shlex.split(line[2:]) for line in result.stdout.splitlines() if line.startswith("$ ")]


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_the_readmes_deploy_dry_run_prints_sam_commands_for_its_region_and_profile():
    [command] = [c for c in COMMANDS if c.startswith("make deploy") and "--dry-run" in c]
    module, *argv = module_command(*split_make(command))
    assert module == "ops"
    commands = _ops_dry_run(argv)
    assert [c[1] for c in commands] == ["build", "deploy"]
    for sam in commands:
        assert sam[sam.index("--region") + 1] == "eu-west-1"
        assert sam[sam.index("--profile") + 1] == "prod"
    # The region from the environment, as `AWS_REGION=eu-west-1 make deploy ARGS="--dry-run"` gives it.
    for sam in _ops_dry_run(["deploy", "--dry-run"], AWS_REGION="eu-west-1"):
        assert sam[sam.index("--region") + 1] == "eu-west-1"


def test_each_invariant_is_decided_in_one_named_function_of_the_layer():
    # The invariant table is where a newcomer starts: its first name in "decided in" must be a
    # function of the layer (a rename breaks the table here, not in a reader's hands), and every module
    # in "tested in" must exist.
    import importlib

    document = ROOT / "docs" / "design.md"
    rows = re.findall(r"^\| ([1-6])\. (.+?) \| (.+?) \| (.+?) \|$", document.read_text(), flags=re.M)
    assert sorted(number for number, *_ in rows) == ["1", "2", "3", "4", "5", "6"]
    for number, _, decided_in, tested_in in rows:
        first = re.search(r"`([a-z_]+)\.([A-Za-z_.]+)`", decided_in)
        assert first is not None, f"invariant {number}: no function named in {decided_in!r}"
        # Named by its module (``plan.plan_burst``), wherever its package is: module names are unique.
        [path] = [p for p in LAYER.rglob(f"{first.group(1)}*") if p.stem == first.group(1)]
        module = path.relative_to(LAYER.parent).with_suffix("").as_posix().replace("/", ".")
        target = importlib.import_module(module)
        for part in first.group(2).split("."):
            target = getattr(target, part)
        assert callable(target), f"invariant {number}: {first.group(0)} is not a function"
        tests = re.findall(r"`(tests/[^`]+\.py)`", tested_in)
        assert tests, f"invariant {number}: no test module named"
        assert [t for t in tests if not (ROOT / t).is_file()] == []


def test_every_module_of_the_layer_is_in_the_designs_module_table():
    # One concern per module, each named where a newcomer looks for it.
    design = (ROOT / "docs" / "design.md").read_text()
    table = " ".join(line for line in design.splitlines() if line.startswith("| `"))
    layer = ROOT / "layers" / "replyonce" / "replyonce"
    paths = sorted(layer.rglob("*.py"))
    modules = [p.relative_to(layer).as_posix() for p in paths if p.name != "__init__.py"]
    missing = [name for name in modules if f"`{name}`" not in table]
    assert missing == []


# Files that name test modules of other projects, or made-up ones as examples of an argument.
_NAMES_OTHER_TESTS = {
    "scripts/measure_new_text.py",
    "tests/static/test_makefile.py",
    "tests/static/test_readme.py",
}


def test_every_test_module_the_code_names_exists():
    # A docstring that sends a reader to a test module must send them to one that is there.
    named = {
        (source.relative_to(ROOT).as_posix(), module)
        for source in ROOT.glob("[!.]*/**/*.py")
        if source.relative_to(ROOT).as_posix() not in _NAMES_OTHER_TESTS
        for module in re.findall(r"\btests/[\w/]+\.py\b", source.read_text())
    }
    assert named, "no test module named anywhere: the pattern above no longer matches"
    assert {(source, module) for source, module in named if not (ROOT / module).is_file()} == set()


# Units the README writes a number of seconds or bytes in.
_UNITS = {"": 1, "s": 1, "rps": 1, "h": 3600, "MiB": 1_048_576}


def _deployed_values() -> dict[str, float]:
    """What a deploy left at its defaults runs with, by variable and by template parameter.

    A variable the template sets is the template's value (a literal, or its parameter's default); one
    it leaves unset is the code's default (``replyonce.config``).
    """
    import dataclasses

    from devstack.template import declared_variables
    from ops.template import load_template
    from replyonce import config

    template = load_template()
    parameters = template["Parameters"]
    values: dict[str, float] = {
        name: float(p["Default"]) for name, p in parameters.items() if p.get("Type") == "Number"
    }
    source = re.sub(r"\s+", " ", (ROOT / "layers" / "replyonce" / "replyonce" / "config.py").read_text())
    defaults = {
        f.name: f.default
        for cls in (config.SecretsSettings, config.WebhookSettings, config.ReplierSettings)
        for f in dataclasses.fields(cls)
    }
    for variable, field_name in re.findall(r'env, "([A-Z0-9_]+)", _default\(cls, "([a-z_]+)"\)', source):
        if isinstance(defaults.get(field_name), int | float):
            values[variable] = float(defaults[field_name])
    # What no variable sets is the field's default, by its own name (docs/configuration.md lists them).
    values.update(
        {
            name: float(value)
            for name, value in defaults.items()
            if isinstance(value, int | float) and value is not True
        }
    )
    for function in ("WebhookFunction", "ReplierFunction"):
        for variable, value in declared_variables(template, function).items():
            if isinstance(value, dict) and value.get("Ref") in values:
                values[variable] = values[value["Ref"]]
            elif re.fullmatch(r"\d+(\.\d+)?", str(value)):
                values[variable] = float(value)
    return values


def _readme_figures() -> list[tuple[str, float, str]]:
    """(name, value, as written): each figure the README (or the design) gives a variable or a parameter."""
    figures = []
    section = CONFIGURATION
    for names, meaning in re.findall(r"^\| (`[A-Z].*?) \| \w+ \| [^|]* \| (.*) \|$", section, re.MULTILINE):
        numbers = re.findall(r"\((\d+)(?:, (\d+))?(?=[;,) ])", meaning)
        if numbers:
            written = [n for n in numbers[-1] if n]
            # One figure per variable, in the order the row names them (a row may name more variables).
            named = re.findall(r"`([A-Z][A-Z0-9_]+)`", names)
            figures += [(n, float(v), v) for n, v in zip(named, written, strict=False)]
    # The design's configuration contract gives a few of the same defaults: "(default N", in its rows.
    design = (ROOT / "docs" / "design.md").read_text()
    for name, number in re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|.*\(default (\d+)", design, re.MULTILINE):
        figures.append((name, float(number), f"default {number} (docs/design.md)"))
    for name, number, unit in re.findall(
        r"`(\w+)`\)?,?\s+\(?(\d[\d,]*) ?(s|h|MiB|rps)?\b", GUIDES + "\n" + CONFIGURATION
    ):
        figures.append(
            (name, float(number.replace(",", "")) * _UNITS[unit or ""], f"{number} {unit}".strip())
        )
    return figures


def test_the_readmes_figures_are_what_the_template_deploys():
    # The README once said 100 rps where the template deploys 700, and gave BUSY_RETRY_SECONDS and
    # LEASE_WAIT_SECONDS the code's defaults, which the template overrode (both fixed tunings since).
    # Each figure is checked against the template (or, for a value no variable sets, the code's default).
    deployed = _deployed_values()
    figures = [(name, value, written) for name, value, written in _readme_figures() if name in deployed]
    assert len(figures) > 20, "the README's figures are no longer found: the patterns above need updating"
    wrong = [
        f"{name}: README {written}, deployed {deployed[name]:g}"
        for name, value, written in figures
        if value != deployed[name]
    ]
    assert wrong == []


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_designs_tables_are_written_once_and_linked_to():
    # The invariant table and the table of what each Nylas answer proves live in docs/design.md; the
    # README and the code's docstrings link to them instead of keeping copies that drift.
    design = (ROOT / "docs" / "design.md").read_text()
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", design, re.MULTILINE)}
    assert "the-seven-invariants-and-where-each-is-decided" in anchors
    assert "docs/design.md#the-seven-invariants-and-where-each-is-decided" in README
    layer = ROOT / "layers" / "replyonce" / "replyonce"
    copies = {
        "README.md": re.findall(r"^\| [1-6]\. .+ \|$", README, re.MULTILINE),
        "core": [
            line
            for path in sorted((layer / "core").glob("*.py"))
            for line in re.findall(r"^- .+: :func:`_\w+`", path.read_text(), re.MULTILINE)
        ],
        "answers.py": re.findall(r"^={10,}", (layer / "answers.py").read_text(), re.MULTILINE),
    }
    assert {name: found for name, found in copies.items() if found} == {}
    assert '"What a Nylas answer proves"' in (layer / "answers.py").read_text()
