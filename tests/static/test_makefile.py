"""The Makefile as a newcomer meets it: `make` alone lists the targets; the local stack installs no checkov.

Run with ``make -n`` (print, do not run) against a venv path that does not
exist, so each target shows the whole set-up a fresh clone would do.
"""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.static.test_readme import shell_environment

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def make(*args: str, venv: Path) -> str:
    result = subprocess.run(  # noqa: S603 - make with our own arguments
        [MAKE, "--no-print-directory", *args, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=shell_environment(),  # not the variables of a `make pytest ARGS=...` this runs under
    )
    return result.stdout


def phony_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return {name for line in re.findall(r"^\.PHONY:(.*)$", text, re.MULTILINE) for name in line.split()}


def test_make_alone_lists_every_target_and_runs_nothing(tmp_path):
    dry_run = make("-n", venv=tmp_path / "venv")
    assert "pytest" not in dry_run
    assert "pip" not in dry_run
    listing = make("-s", venv=tmp_path / "venv")
    listed = set(re.findall(r"^  (\S+)\s{2,}\S", listing, re.MULTILINE))
    assert phony_targets() - {"help"} <= listed
    assert not (tmp_path / "venv").exists()


@pytest.mark.parametrize("target", ["demo", "serve", "listen", "mail", "thread", "invoke", "events"])
def test_the_local_stack_installs_only_what_it_needs(tmp_path, target):
    commands = make("-n", target, venv=tmp_path / "venv")
    assert "requirements-local.txt" in commands
    assert "checkov" not in commands
    assert "requirements-dev.txt" not in commands


def test_the_tests_build_the_checkov_environment(tmp_path):
    commands = make("-n", "pytest", venv=tmp_path / "venv")
    assert "requirements-dev.txt" in commands
    assert "requirements-checkov.txt" in commands
    assert commands.index("requirements-local.txt") < commands.index("requirements-dev.txt")


@pytest.mark.parametrize(
    ("args", "needs_checkov"),
    [
        ("tests/unit/test_decisions.py -q", False),
        ("tests/unit/test_decisions.py::test_x tests/e2e", False),
        ("tests/integration tests/harness", False),
        ("tests/static/test_template_security.py -q", True),
        ("tests/static -q", True),
        ("-q tests/", True),
        ("-k security", True),  # no path: the whole suite, the security tests included
    ],
)
def test_pytest_builds_checkov_only_for_a_run_that_includes_the_security_tests(tmp_path, args, needs_checkov):
    commands = make("-n", "pytest", f"ARGS={args}", venv=tmp_path / "venv")
    assert ("requirements-checkov.txt" in commands) is needs_checkov
    assert "requirements-dev.txt" in commands
    # Named paths run in one process; the whole suite on the xdist workers.
    workers = 0 if "tests" in args else 4
    assert f"-m pytest -n {workers} {args}" in commands


def test_setup_shows_progress_rather_than_pip_quiet(tmp_path):
    commands = make("-n", "demo", venv=tmp_path / "venv")
    [install] = [line for line in commands.splitlines() if "requirements-local.txt" in line]
    assert "scripts/install.py" in install
    assert "--quiet" not in install


TIERS = ("unit", "static", "contract", "integration", "e2e", "harness")


# Where pytest collects (pyproject's testpaths): the tiers under tests/, and the bench's own tests.
TEST_ROOTS = ("tests", "bench/tests")


def _test_modules() -> list[Path]:
    return [module for root in TEST_ROOTS for module in (ROOT / root).rglob("test_*.py")]


def tier_paths(target: str, venv: Path) -> list[str]:
    """The paths ``make -n test-<tier>`` hands pytest."""
    [run] = [line for line in make("-n", target, venv=venv).splitlines() if " -m pytest " in line]
    return [word for word in run.split() if word.startswith(TEST_ROOTS)]


def test_each_tier_target_runs_its_folder_and_together_they_run_every_test_module_once(tmp_path):
    # A module no tier target runs would run only in `make test`; one two targets run, twice as often.
    ran_by: dict[str, list[str]] = {}
    for tier in TIERS:
        paths = tier_paths(f"test-{tier}", tmp_path / "venv")
        assert f"tests/{tier}" in paths
        for module in sorted(_test_modules()):
            relative = module.relative_to(ROOT).as_posix()
            if any(relative == p or relative.startswith(p.rstrip("/") + "/") for p in paths):
                ran_by.setdefault(relative, []).append(tier)
    # The roots are pytest's own: a new one in pyproject's testpaths is run by a tier or fails here.
    assert (
        tuple(
            tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
        )
        == TEST_ROOTS
    )
    every = {m.relative_to(ROOT).as_posix() for m in _test_modules()}
    assert set(ran_by) == every
    assert {module: tiers for module, tiers in ran_by.items() if len(tiers) > 1} == {}


def test_only_the_static_tier_builds_the_checkov_environment(tmp_path):
    for tier in TIERS:
        commands = make("-n", f"test-{tier}", venv=tmp_path / "venv")
        assert "requirements-dev.txt" in commands
        assert ("requirements-checkov.txt" in commands) is (tier == "static"), tier
