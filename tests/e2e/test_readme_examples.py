"""The README's examples run as a person runs them: ``make mail`` against a real ``make serve``, every
``make invoke`` line, the ``sam local invoke`` command and the ``--env-vars`` file shown.

The README's text itself (its commands name real targets and parse, its links resolve, its tables name
what exists) is checked without running anything, in ``tests/static/test_readme.py``; these tests start
the local stack, so they are end to end.
"""

import json
import re
import shlex

import pytest

from devstack import invoke, trigger
from devstack.env_vars import load_env_vars_file
from devstack.events import ENV_VARS_FILE, event_file_names, load_event
from tests.e2e.test_serve_trigger import Serve
from tests.static.test_readme import (
    COMMANDS,
    GUIDES,
    MAKE,
    README,
    ROOT,
    code_blocks,
    make_commands,
    module_command,
    split_make,
)


@pytest.fixture(autouse=True)
def _no_real_nylas_from_the_shell(monkeypatch):
    """make invoke takes the shell's value of declared variables (as SAM does): never a real Nylas here."""
    for name in ("NYLAS_API_URI", "AGENT_GRANT_IDS", "QUEUE_URL", "NYLAS_SECRETS_ID"):
        monkeypatch.delenv(name, raising=False)


def readme_mail_commands() -> list[list[str]]:
    """The argv of each ``make mail`` line in the README's bash blocks."""
    found = []
    for command in make_commands("\n".join(f"```bash\n{b}```" for b in code_blocks(README, "bash"))):
        target, variables = split_make(command)
        if target == "mail":
            found.append(["mail", *shlex.split(variables.get("ARGS", ""))])
    return found


def readme_serve_grants() -> list[str]:
    """The ``--grants N`` of the README's ``make serve`` line for many mailboxes (its ``make mail --grant G``
    example writes to one of them)."""
    for command in make_commands("\n".join(f"```bash\n{b}```" for b in code_blocks(README, "bash"))):
        target, variables = split_make(command)
        words = shlex.split(variables.get("ARGS", ""))
        if target == "serve" and "--grants" in words:
            return words[words.index("--grants") : words.index("--grants") + 2]
    return []


def test_the_readmes_mail_example_gets_its_reply(tmp_path, capsys):
    examples = readme_mail_commands()
    assert examples, "the README shows no `make mail` example"
    serve = Serve(tmp_path / "serve.log", *readme_serve_grants())
    try:
        for argv in examples:
            capsys.readouterr()
            assert trigger.main([*argv, "--url", serve.base_url]) == 0
            out = capsys.readouterr().out
            thread_id = re.search(r"on thread (\S+):", out).group(1)
            messages = trigger.ServeClient(serve.base_url).thread(thread_id)["data"]
            assert [m["folders"] for m in messages] == [["inbox"], ["sent"]]
        serve.wait_for("reply sent")
        if "--duplicates" in " ".join(examples[0]):
            serve.wait_for("duplicate delivery absorbed")
    finally:
        serve.stop()


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_the_readmes_invoke_examples_run(tmp_path, capsys):
    [env_example] = [b for b in code_blocks(GUIDES, "json") if "ReplierFunction" in b]
    env_file = tmp_path / "env.json"
    env_file.write_text(env_example)
    ran_the_example_file = False
    for command in COMMANDS:
        target, variables = split_make(command)
        if target != "invoke" or "FN" not in variables:
            continue
        # The arguments `make` passes (its ENV_VARS default included), with the README's env.json.
        module, *argv = module_command(target, variables)
        assert module == "devstack.invoke", command
        argv = [str(env_file) if word == "env.json" else word for word in argv]
        capsys.readouterr()
        assert invoke.main(argv) == 0, command
        err = capsys.readouterr().err
        [overrides] = [line for line in err.splitlines() if line.startswith("environment overrides of ")]
        if str(env_file) in argv:
            # The README's --env-vars example, as a file, changes the invocation as it says.
            ran_the_example_file = True
            example = json.loads(env_example)
            for name, value in [*example["ReplierFunction"].items(), *example["Parameters"].items()]:
                assert f"{name}={value} (--env-vars)" in overrides
    assert ran_the_example_file, "no `make invoke ... ENV_VARS=env.json` line in the README"


def sam_local_invoke_commands() -> list[list[str]]:
    """The argv of each ``sam local invoke`` line of the README's bash blocks."""
    return [
        shlex.split(line.strip())
        for block in code_blocks(GUIDES, "bash")
        for line in block.splitlines()
        if line.strip().startswith("sam local invoke ")
    ]


def test_the_readmes_sam_local_invoke_command_is_answered_200_with_the_templates_environment():
    commands = sam_local_invoke_commands()
    assert commands, "the README shows no `sam local invoke` command"
    for argv in commands:
        function = argv[3]
        event_path = ROOT / argv[argv.index("-e") + 1]
        env_vars = load_env_vars_file(ROOT / argv[argv.index("--env-vars") + 1])
        assert function == "WebhookFunction"
        # Every signed event of events/, run as that command runs its own: the template's
        # environment plus only what the command's --env-vars file adds.
        webhook_events = [name for name in event_file_names() if name.startswith("webhook-")]
        posts = [name for name in webhook_events if load_event(name)["httpMethod"] == "POST"]
        assert event_path.name in posts
        for name in posts:
            result = invoke.invoke(function, load_event(name), env_vars=env_vars, shell_environment={})
            assert {source for _, source in result["overrides"].values()} <= {"--env-vars"}
            expected = 401 if "forged" in name or "missing" in name else 200
            assert result["response"]["statusCode"] == expected, name


def test_the_sample_events_env_file_holds_exactly_what_they_need():
    # Without the file the template's replay bound refuses the sample event; with it, it is queued.
    event = load_event("webhook-message-created.json")
    without = invoke.invoke("WebhookFunction", event, shell_environment={})
    assert without["response"]["statusCode"] == 401
    assert "a replay" in without["response"]["body"]
    assert load_env_vars_file(ENV_VARS_FILE) == {"WebhookFunction": {"MAX_NOTIFICATION_AGE_SECONDS": "0"}}
