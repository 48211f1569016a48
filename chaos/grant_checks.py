"""Every invariant per grant (issue 42): what a grant's life forbids, checked from world facts only.

Like ``devstack/invariants.py`` this module imports nothing from ``layers/`` or ``functions/``
(``tests/harness/test_grant_checks.py`` runs it in a fresh interpreter and lists the modules loaded). Its
facts:

- **the run's own log of the grants' lives** (``chaos.grants.LifeEvent``: who did what to which grant,
  when, in real time): registered, created by Nylas, re-moded, paused and resumed by the operator,
  expired and re-authenticated by Nylas, the deletion notified, the deletion seen in the registry, the
  grant deleted at Nylas;
- **what went out**: every email the emulator delivered, dated by the first send request of its draft
  seen on the wire, and every draft creation request seen on the wire (review mode's replies);
- **the mailbox**: every message, its arrival and its thread; where each ends (the hand-off folder);
- **ground truth** of each message (``devstack.invariants.Truth``: whether a person wrote it and it must
  be answered);
- **the bound of a registry change** (``effect_seconds``): the run's cache age plus its function timeout.
  A record that started before a change may finish under the settings it began with; one that started
  ``effect_seconds`` after it runs under the change. Sends inside that margin are not judged.

The checks, numbered after the seven invariants:

- **8**: a send request Nylas took (``200``/``202``, not a key's replay), or a draft it made, for a deleted
  grant, started after the stack had recorded the deletion (a retry of a draft begun before is one);
- **9**: an email, or a draft, of a grant in shadow (created by Nylas and not yet promoted, or set to
  shadow), or an email of a grant in review, started inside the mode's window;
- **10**: an inbound message of a re-moded grant answered twice: two of (an email to it, a draft for it);
- **11**: a message a person wrote to a paused or expired grant, arrived before it was resumed, that ends
  in neither an email of the grant in its thread after it arrived nor the hand-off folder; or an email of
  the grant that went out while it was paused (a message still dead-lettered at the end is lost).

Per grant, too, the seven invariants: :func:`per_grant` names the grants each violation sentence of
``devstack.invariants.check`` is about.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from devstack.invariants import payload_digest

GRANT_CHECKS = {
    8: "per grant: no send or draft after its deletion was recorded",
    9: "per grant: no send or draft in shadow, no send in review",
    10: "per grant: nothing answered twice across a mode change",
    11: "per grant: nothing lost across a pause or an expiry",
}


@dataclass
class GrantHistory:
    """What the per-grant checks read (every time real time, seconds)."""

    events: list[Any]  # chaos.grants.LifeEvent: grant_id, kind, at, mode
    fleet: set[str]  # the grants whose lives were played (every fleet grant)
    mailbox: list[tuple[float, dict[str, Any]]]  # (arrived_at, message), every grant
    truth: Mapping[str, Any]  # message id -> devstack.invariants.Truth
    sends: list[Any]  # emulator send records: grant_id, payload, message
    send_attempts: list[Any]  # wire tap: grant_id, payload_digest, started
    draft_requests: list[Any]  # wire tap: grant_id, reply_to_message_id, started, status
    effect_seconds: float
    handoff_folder: str
    harness_sent_ids: set[str] = field(default_factory=set)  # teammates' sends: not the agent's


@dataclass
class GrantVerdict:
    violations: dict[int, list[str]]
    figures: dict[int, str]  # what each check looked at, in a phrase


@dataclass(frozen=True)
class _Out:
    """One email or draft request of a grant: when its first request started, what it answered."""

    grant_id: str
    kind: str  # "email" or "draft"
    started: float
    target: str
    thread_id: str = ""
    arrived: float = 0.0  # an email's arrival in the mailbox


def check_grants(history: GrantHistory) -> GrantVerdict:
    outs = _outs(history)
    by_grant: dict[str, list[_Out]] = defaultdict(list)
    for out in outs:
        by_grant[out.grant_id].append(out)
    events: dict[str, list[Any]] = defaultdict(list)
    for event in sorted(history.events, key=lambda e: e.at):
        events[event.grant_id].append(event)
    violations: dict[int, list[str]] = {number: [] for number in GRANT_CHECKS}
    figures: dict[int, str] = {}
    figures[8] = _after_deletion(history, events, by_grant, violations[8])
    figures[9] = _in_shadow_or_review(history, events, by_grant, violations[9])
    figures[10] = _answered_twice(history, events, by_grant, violations[10])
    figures[11] = _lost_across_pause(history, events, by_grant, violations[11])
    return GrantVerdict(violations, figures)


def _outs(history: GrantHistory) -> list[_Out]:
    first: dict[tuple[str, str], float] = {}
    for attempt in history.send_attempts:
        slot = (attempt.grant_id, attempt.payload_digest)
        first[slot] = min(first.get(slot, attempt.started), attempt.started)
    arrived = {message["id"]: at for at, message in history.mailbox}
    outs = []
    for record in history.sends:
        message = record.message
        if record.grant_id not in history.fleet or message["id"] in history.harness_sent_ids:
            continue
        payload = record.payload if isinstance(record.payload, Mapping) else {}
        at = arrived.get(message["id"], 0.0)
        started = min(first.get((record.grant_id, payload_digest(record.payload)), at), at)
        target = str(payload.get("reply_to_message_id") or message.get("in_reply_to") or "")
        outs.append(_Out(record.grant_id, "email", started, target, message["thread_id"], at))
    # A draft request counts once it was answered 200 (a refused one made no draft).
    for request in history.draft_requests:
        if request.grant_id in history.fleet and request.status == 200:
            outs.append(_Out(request.grant_id, "draft", request.started, request.reply_to_message_id))
    return outs


def _windows(events: list[Any], effect: float) -> dict[str, list[tuple[float, float]]]:
    """Per mode other than send, the intervals the grant surely answered in it: from ``effect`` after it
    was set (at once for a grant Nylas created: nothing of it ran before) until the next mode."""
    windows: dict[str, list[tuple[float, float]]] = defaultdict(list)
    mode, since = "", 0.0
    for event in events:
        if event.kind not in ("registered", "created", "mode"):
            continue
        if mode and mode != "send":
            windows[mode].append((since, event.at))
        mode = event.mode
        since = event.at if event.kind == "created" else event.at + effect
    if mode and mode != "send":
        windows[mode].append((since, float("inf")))
    return windows


def _after_deletion(
    history: GrantHistory, events: dict[str, list[Any]], by_grant: dict[str, list[_Out]], found: list[str]
) -> str:
    """Every send request Nylas took (``200``/``202``, not a key's replay) and every draft it made: a retry
    of a draft begun before the deletion is a send after it all the same."""
    grants, judged = 0, 0
    for grant_id, lives in events.items():
        recorded = next((e.at for e in lives if e.kind == "delete_recorded"), None)
        if recorded is None:
            continue
        grants += 1
        taken = [
            ("send", attempt.started)
            for attempt in history.send_attempts
            if attempt.grant_id == grant_id and attempt.status in (200, 202) and not attempt.replayed
        ]
        taken += [("draft", out.started) for out in by_grant.get(grant_id, []) if out.kind == "draft"]
        for kind, started in taken:
            judged += 1
            if started > recorded:
                found.append(
                    f"grant {grant_id}: a {kind} Nylas took, requested {started - recorded:.2f} s after the "
                    "deletion was recorded"
                )
    return f"{grants} grants deleted, {judged} of their sends and drafts judged"


def _in_shadow_or_review(
    history: GrantHistory, events: dict[str, list[Any]], by_grant: dict[str, list[_Out]], found: list[str]
) -> str:
    grants, judged = 0, 0
    for grant_id, lives in events.items():
        windows = _windows(lives, history.effect_seconds)
        if not windows:
            continue
        grants += 1
        for out in by_grant.get(grant_id, []):
            for mode, spans in windows.items():
                if mode == "review" and out.kind == "draft":
                    continue  # review's replies are drafts
                for start, end in spans:
                    if start <= out.started < end:
                        found.append(
                            f"grant {grant_id}: {out.kind} answering {out.target or '?'} started "
                            f"{out.started - start:.2f} s into its {mode} window"
                        )
        judged += len(by_grant.get(grant_id, []))
    return f"{grants} grants in shadow or review for a while, {judged} of their emails and drafts judged"


def _answered_twice(
    history: GrantHistory, events: dict[str, list[Any]], by_grant: dict[str, list[_Out]], found: list[str]
) -> str:
    grants, targets = 0, 0
    for grant_id, lives in events.items():
        if not any(e.kind in ("mode", "created") for e in lives):
            continue
        grants += 1
        answers = Counter(out.target for out in by_grant.get(grant_id, []) if out.target)
        targets += len(answers)
        kinds: dict[str, list[str]] = defaultdict(list)
        for out in by_grant.get(grant_id, []):
            kinds[out.target].append(out.kind)
        for target, times in answers.items():
            if times > 1:
                found.append(
                    f"grant {grant_id}: message {target} answered {times} times ({', '.join(kinds[target])})"
                )
    return f"{grants} grants re-moded, {targets} messages they answered or drafted for"


def _lost_across_pause(
    history: GrantHistory, events: dict[str, list[Any]], by_grant: dict[str, list[_Out]], found: list[str]
) -> str:
    grants, judged = 0, 0
    final: dict[str, dict[str, Any]] = {}
    arrived: dict[str, float] = {}
    for at, message in history.mailbox:
        final[message["id"]] = message
        arrived.setdefault(message["id"], at)
    for grant_id, lives in events.items():
        stops = [e for e in lives if e.kind in ("pause", "expire")]
        if not stops:
            continue
        grants += 1
        resumed = max((e.at for e in lives if e.kind in ("resume", "reauthenticate")), default=float("inf"))
        paused_at = min(e.at for e in stops)
        outs = by_grant.get(grant_id, [])
        for out in outs:
            if out.kind == "email" and paused_at + history.effect_seconds <= out.started < resumed:
                found.append(
                    f"grant {grant_id}: email answering {out.target or '?'} started while the grant was "
                    f"paused ({out.started - paused_at:.2f} s after the pause)"
                )
        emails_by_thread: dict[str, list[float]] = defaultdict(list)
        for out in outs:
            if out.kind == "email":
                emails_by_thread[out.thread_id].append(out.arrived)
        for message_id, message in final.items():
            if message.get("grant_id") != grant_id or arrived[message_id] >= resumed:
                continue
            truth = history.truth.get(message_id)
            if truth is None or not truth.must_answer:
                continue
            judged += 1
            answered = any(at > arrived[message_id] for at in emails_by_thread.get(message["thread_id"], []))
            handed_off = history.handoff_folder in (message.get("folders") or [])
            if not (answered or handed_off):
                found.append(
                    f"grant {grant_id}: message {message_id} from {_sender(message)}, arrived "
                    f"{arrived[message_id] - paused_at:+.1f} s from the pause, never answered nor handed off"
                )
    return f"{grants} grants paused or expired, {judged} people's messages of theirs judged"


def _sender(message: Mapping[str, Any]) -> str:
    people = message.get("from") or []
    return str(people[0].get("email", "?")) if people and isinstance(people[0], Mapping) else "?"


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]*[A-Za-z0-9]")


def per_grant(
    violations: Mapping[int, Iterable[str]], mailbox: Iterable[tuple[float, dict[str, Any]]]
) -> dict[int, set[str]]:
    """The grants each invariant's violation sentences name (by a message, thread or grant id in them)."""
    owner: dict[str, str] = {}
    for _, message in mailbox:
        grant = str(message.get("grant_id", ""))
        owner[str(message["id"])] = grant
        owner[str(message.get("thread_id", ""))] = grant
        owner[grant] = grant
    named: dict[int, set[str]] = {}
    for number, sentences in violations.items():
        grants: set[str] = set()
        for sentence in sentences:
            grants.update(owner[token] for token in _TOKEN.findall(sentence) if token in owner)
        named[number] = grants
    return named


def unowed_messages(
    events: Iterable[Any], mailbox: Iterable[tuple[float, dict[str, Any]]], effect: float
) -> set[str]:
    """Messages no agent owes an end, from the lives' log alone: every message of a deleted grant; and of
    a grant that was in shadow or review (or created by Nylas, in shadow until promoted), every message
    that arrived before ``effect`` after it last went back to send (its record may have run in the mode
    before). Such a grant is held to checks 8 to 10 instead."""
    lives: dict[str, list[Any]] = defaultdict(list)
    for event in sorted(events, key=lambda e: e.at):
        lives[event.grant_id].append(event)
    owed_from: dict[str, float] = {}
    for grant_id, log in lives.items():
        if any(e.kind == "delete_notified" for e in log):
            owed_from[grant_id] = float("inf")
            continue
        windows = _windows(log, 0.0)
        if windows:
            owed_from[grant_id] = max(end for spans in windows.values() for _, end in spans) + effect
    return {
        str(message["id"])
        for at, message in mailbox
        if message.get("grant_id") in owed_from and at < owed_from[message["grant_id"]]
    }
