"""Measure ``replyonce.text.new_text`` on other people's mail: how many bodies' new text is exact.

The sets are the public test fixtures of three reply parsers, read where they
are checked out; nothing of theirs is copied into this repository.

Get them (outside the repository; the commits measured are the ones named)::

    mkdir -p /tmp/mailtext && cd /tmp/mailtext
    git clone <public host>/mailgun/talon                  # 71d9b6eb78e985bcdfbf99b69c20c001b4b818c4
    git clone <public host>/github/email_reply_parser      # 59e5859cfe826d3cb6069bbbfd8577230c93b3cf
    git clone <public host>/discourse/email_reply_trimmer  # 117fd1a2703d110651d4faec09b12dc1fc22f237
    apt-get install ruby   # email_reply_parser's expectations are its own fragments (below)

Run (from the repository root)::

    PYTHONPATH=layers/replyonce .venv/bin/python scripts/measure_new_text.py \\
        --talon /tmp/mailtext/talon --erp /tmp/mailtext/email_reply_parser \\
        --trimmer /tmp/mailtext/email_reply_trimmer

Compare with an earlier version of the module, or with the libraries measured against it::

    git show 4207bc4:layers/replyonce/replyonce/text.py > /tmp/text_before.py
    ... scripts/measure_new_text.py ... --impl before=/tmp/text_before.py --impl shipped \\
        --impl quotequail --impl mail-parser-reply

``--misses`` prints every body that is not exact, with what came out and what was expected.

What each set expects:

- talon: every ``quotations.extract_from_plain(body)`` compared in
  ``tests/text_quotations_test.py`` (the test module is run with a stand-in for
  talon that records each body and the expectation it is compared with; tests of
  talon's internals, which never call it, record nothing), the standard replies
  under ``tests/fixtures`` included;
- email_reply_parser: every ``test/emails/*.txt``; expected is what its own
  library (run with ruby) calls neither quoted nor hidden — the fragments its
  tests in ``test/email_reply_parser_test.rb`` check — joined;
- email_reply_trimmer: ``test/emails/X.txt``, expected ``test/trimmed/X.txt``.

The comparison rule: both sides are whitespace-normalised (every run of spaces,
tabs and line breaks is one space, ends stripped); :data:`replyonce.text.QUOTE_MARKER`
lines are removed from the output, and ``>``-quoted lines from the expectation,
because where a peer keeps a quote around an interleaved answer the contract
keeps only the new words (``--misses`` says where that rule was used). Each
body is measured twice: as the plain text the peers give, and as Nylas gives
mail, HTML (the text escaped, lines as ``<br>``); the two libraries read text
only, so they are measured on the plain text.

A miss where the peer's expectation is itself debatable against the contract
(``docs/agents.md``: keep forwards, strip only real signatures, never the quote)
still counts as a miss; it is listed under its reason, so the figure stays honest.
"""

import argparse
import email
import email.iterators
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# Where a peer's expectation conflicts with the contract, in our judgement: counted as misses, shown apart.
DEBATABLE = {
    ("talon", "test_too_many_lines"): "expects a cut that only talon's line limit, patched to 1, makes",
    ("talon", "test_standard_replies:iphone.eml"): "keeps the client's 'Sent from my iPhone'",
    ("talon", "test_standard_replies:sparrow.eml"): "keeps the '-- ' signature (talon strips it elsewhere)",
    ("erp", "email_1_1.txt"): "takes the sign-off '-Abhishek Kona' for a signature",
    ("erp", "email_1_3.txt"): "takes the sign-off '-Abhishek Kona' for a signature",
    ("erp", "email_long_quote.txt"): "takes the sign-off '-Abhishek Kona' for a signature",
    ("erp", "email_1_6.txt"): "keeps a client footer 'Sent from a magnificent torch of pixels'",
    ("trimmer", "forwarded_apple.txt"): "drops the forwarded message (its extract_embedded_email keeps it)",
    ("trimmer", "forwarded_gmail.txt"): "drops the forwarded message (its extract_embedded_email keeps it)",
    ("trimmer", "forwarded_message.txt"): "drops the forward's header lines",
    ("trimmer", "embedded_email_17.txt"): "keeps the unquoted text under a leading 'On … wrote:'",
    ("trimmer", "embedded_email_18.txt"): "keeps the unquoted text under a leading 'On … wrote:'",
    ("trimmer", "embedded_email_7.txt"): "drops words after a '____' line as a signature",
    ("trimmer", "embedded_email_1.txt"): "drops the words written below a quote, as if a signature",
}


@dataclass(frozen=True)
class Case:
    """One body of a set and the new text its peer expects."""

    set: str
    name: str
    body: str
    expected: str


# --- the sets ------------------------------------------------------------------------------------------


class _Recorded:
    def __init__(self, body: str) -> None:
        self.body = body


class _NotMeasured(Exception):
    """A talon test of its internals: it records nothing."""


def talon_cases(root: Path) -> list[Case]:
    """Run talon's text quotation tests against a recorder standing in for ``talon.quotations``."""
    source = (root / "tests" / "text_quotations_test.py").read_text(encoding="utf-8")
    source = re.sub(
        r"^from \. ?(?:fixtures )?import \*$|^from talon import quotations$", "", source, flags=re.M
    )
    cases: list[Case] = []
    current = ["", 0]

    class Quotations:
        MAX_LINES_COUNT = 1000

        @staticmethod
        def extract_from_plain(body: str) -> _Recorded:
            return _Recorded(body)

        def __getattr__(self, name: str) -> object:
            raise _NotMeasured(name)

    def eq_(first: object, second: object, message: object = None) -> None:
        recorded, expected = (second, first) if isinstance(second, _Recorded) else (first, second)
        if isinstance(recorded, _Recorded) and isinstance(expected, str):
            current[1] += 1
            name = current[0] if current[1] == 1 else f"{current[0]}#{current[1]}"
            cases.append(Case("talon", name, recorded.body, expected))

    class Patch:
        @staticmethod
        def object(*_args: object, **_kwargs: object) -> Callable[[Callable], Callable]:
            return lambda function: function

    namespace = {
        "__name__": "talon_text_quotations_test",
        "eq_": eq_,
        "ok_": lambda *a, **k: None,
        "patch": Patch,
        "quotations": Quotations(),
        "STANDARD_REPLIES": str(root / "tests" / "fixtures" / "standard_replies"),
    }
    exec(compile(source, "text_quotations_test.py", "exec"), namespace)  # noqa: S102 - the peer's own tests
    for name, test in list(namespace.items()):
        if not (name.startswith("test_") and callable(test)):
            continue
        current[:] = [name, 0]
        try:
            result = test()
            if isinstance(result, Iterator):  # nose's yield tests: (check, expected, got, message)
                for check, *args in result:
                    filename = str(args[-1]).rsplit(os.sep, 1)[-1].removesuffix(".eml")
                    current[:] = [f"{name}:{filename}.eml" if filename else name, 0]
                    check(*args)
        except _NotMeasured:
            continue
    return cases


def _eml_text(path: Path) -> str:
    with path.open(encoding="utf-8") as handle:
        message = email.message_from_file(handle)
    part = next(email.iterators.typed_subpart_iterator(message, subtype="plain"))
    payload = part.get_payload(decode=True)
    return payload.decode("utf-8") if isinstance(payload, bytes) else str(payload)


_ERP_FRAGMENTS = """
out = Dir[File.join(ARGV[0], "test", "emails", "*.txt")].sort.map do |path|
  reply = EmailReplyParser.read(File.read(path))
  {"name" => File.basename(path),
   "fragments" => reply.fragments.map { |f|
     {"text" => f.to_s, "quoted" => f.quoted?, "hidden" => f.hidden?} }}
end
puts JSON.generate(out)
"""


def erp_cases(root: Path) -> list[Case]:
    """email_reply_parser's emails, each expecting the fragments its library shows and does not quote."""
    ruby = shutil.which("ruby")
    if not ruby:
        sys.exit("email_reply_parser's expectations come from its own library: apt-get install ruby")
    lib = str(root / "lib")
    command = [ruby, "-I", lib, "-r", "email_reply_parser", "-r", "json", "-e", _ERP_FRAGMENTS, str(root)]
    emails = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)  # noqa: S603
    cases = []
    for entry in emails:
        shown = [f["text"] for f in entry["fragments"] if not f["quoted"] and not f["hidden"]]
        body = (root / "test" / "emails" / entry["name"]).read_text(encoding="utf-8")
        cases.append(Case("erp", entry["name"], body, "\n".join(shown)))
    return cases


def trimmer_cases(root: Path) -> list[Case]:
    """email_reply_trimmer's emails and their trimmed results."""
    cases = []
    for path in sorted((root / "test" / "emails").glob("*.txt")):
        body = path.read_bytes().decode("utf-8")
        expected = (root / "test" / "trimmed" / path.name).read_bytes().decode("utf-8")
        cases.append(Case("trimmer", path.name, body, expected))
    return cases


# --- what is measured -----------------------------------------------------------------------------------


def _load(path: str) -> Callable[[str], str]:
    spec = importlib.util.spec_from_file_location(f"measured_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.new_text


def _quotequail(body: str) -> str:
    import quotequail

    text = html.unescape(body)
    unwrapped = quotequail.unwrap(text)
    if unwrapped and unwrapped.get("text_top") is not None:
        return str(unwrapped["text_top"])
    kept = []
    for is_new, part in quotequail.quote(text):
        if not is_new:
            break
        kept.append(part)
    return "\n".join(kept)


def _mail_parser_reply(body: str) -> str:
    from mailparser_reply import EmailReplyParser

    languages = ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "da", "pl", "ru"]
    text = html.unescape(body)
    return EmailReplyParser(languages=languages).parse_reply(text=text) or ""


def implementation(spec: str) -> tuple[str, Callable[[str], str], bool]:
    """What ``spec`` names, and whether it reads HTML.

    ``NAME=PATH`` (a text.py), ``shipped``, ``quotequail`` or ``mail-parser-reply``.
    """
    name, _, path = spec.partition("=")
    if path:
        return name, _load(path), True
    if spec == "shipped":
        from replyonce.text import new_text  # PYTHONPATH decides which checkout

        return spec, new_text, True
    if spec == "quotequail":
        return spec, _quotequail, False
    if spec == "mail-parser-reply":
        return spec, _mail_parser_reply, False
    sys.exit(f"unknown implementation {spec!r}")


# --- the comparison -------------------------------------------------------------------------------------

_MARKER = "[quoted text]"


def normalised(text: str) -> str:
    return " ".join(text.split())


def output_words(text: str) -> str:
    return normalised("\n".join(line for line in text.splitlines() if line.strip() != _MARKER))


def expected_words(text: str) -> tuple[str, bool]:
    """The expectation without ``>``-quoted lines, and whether it had any."""
    lines = text.replace("\r\n", "\n").splitlines()
    kept = [line for line in lines if not line.lstrip().startswith(">")]
    return normalised("\n".join(kept)), len(kept) != len(lines)


def as_html(text: str) -> str:
    """A plain-text mail as Nylas gives its ``body``: HTML (the text escaped, lines broken)."""
    text = text.replace("\r\n", "\n")
    return "<div>" + html.escape(text).replace("\n", "<br>") + "</div>"


def quote_back(case: Case, got: str) -> bool:
    """Whether the output returns quoted history: a ``>``-quoted line of the body, or the whole body
    where the peer removes something."""
    expected, _ = expected_words(case.expected)
    out = got.splitlines()
    forward = next((i for i, line in enumerate(out) if re.search(r"(?i)forward", line)), len(out))
    if forward == len(out) and normalised(got) == normalised(case.body) and expected != normalised(case.body):
        return True
    quoted = {
        normalised(line.lstrip(" >")) for line in case.body.splitlines() if line.lstrip().startswith(">")
    }
    quoted = {line for line in quoted if len(line.split()) >= 3 and line not in expected}
    return any(normalised(line) in quoted for line in out[:forward])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--talon", type=Path, help="a checkout of mailgun/talon")
    parser.add_argument("--erp", type=Path, help="a checkout of github/email_reply_parser")
    parser.add_argument("--trimmer", type=Path, help="a checkout of discourse/email_reply_trimmer")
    parser.add_argument("--impl", action="append", help="what to measure (repeatable); default: shipped")
    parser.add_argument("--misses", action="store_true", help="print every body that is not exact")
    args = parser.parse_args()
    cases: list[Case] = []
    for loader, root in ((talon_cases, args.talon), (erp_cases, args.erp), (trimmer_cases, args.trimmer)):
        if root:
            cases.extend(loader(root))
    if not cases:
        parser.error("name at least one set")
    sets = list(dict.fromkeys(case.set for case in cases))
    for spec in args.impl or ["shipped"]:
        name, new_text, reads_html = implementation(spec)
        forms = ("plain", "as HTML") if reads_html else ("plain",)  # the libraries read text only
        print(f"== {name}")
        totals = dict.fromkeys(forms, 0)
        backs = dict.fromkeys(forms, 0)
        for set_name in sets:
            mine = [case for case in cases if case.set == set_name]
            exact = dict.fromkeys(forms, 0)
            debatable: dict[str, list[str]] = {}
            for case in mine:
                expected, used_rule = expected_words(case.expected)
                for form in forms:
                    got = new_text(as_html(case.body) if form == "as HTML" else case.body)
                    ok = output_words(got) == expected
                    exact[form] += ok
                    back = quote_back(case, got)
                    backs[form] += back
                    if back and args.misses:
                        print(f"--- {set_name} {case.name} ({form}): QUOTED HISTORY RETURNED")
                    if form != "plain":
                        continue
                    reason = DEBATABLE.get((case.set, case.name))
                    if not ok and reason:
                        debatable.setdefault(reason, []).append(case.name)
                    if args.misses and (not ok or used_rule):
                        tag = "exact, '>' lines dropped from the expectation" if ok else "MISS"
                        print(
                            f"--- {set_name} {case.name}: {tag}"
                            + (f" (debatable: {reason})" if reason else "")
                        )
                        if not ok:
                            print(f"    got:      {output_words(got)[:300]!r}")
                            print(f"    expected: {expected[:300]!r}")
            for form in forms:
                totals[form] += exact[form]
            figures = ", ".join(f"{exact[form]:3}/{len(mine)} {form}" for form in forms)
            print(
                f"{set_name:8} exact {figures}; "
                f"misses where the peer's expectation is debatable: {sum(map(len, debatable.values()))}"
            )
            for reason, names in debatable.items():
                print(f"           {reason}: {', '.join(names)}")
        n = len(cases)
        figures = ", ".join(f"{totals[form]}/{n} {form} ({100 * totals[form] / n:.0f} %)" for form in forms)
        returned = ", ".join(f"{backs[form]} {form}" for form in forms)
        print(f"overall  exact {figures}; quoted history returned as new: {returned}")


if __name__ == "__main__":
    main()
