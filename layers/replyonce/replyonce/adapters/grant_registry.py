"""The grant registry on DynamoDB (``GRANT_REGISTRY_TABLE``): the one owner of its items' layout.

A table of its own, apart from the state table: it is configuration an operator writes
(``make grants``), read by every replier container through a cache, with its own retention (PITR,
retained with the stack) and no TTL; the state table is the replier's memory, written on every
record. Two kinds of item, keyed ``pk`` (partition) and ``sk`` (sort):

- a grant's record: ``pk`` ``grant``, ``sk`` the grant id; ``settings`` (JSON text: the settings it
  overrides, ``replyonce.grants``), ``updated_at`` (ISO 8601, UTC), ``updated_by`` (the caller's ARN,
  from STS);
- a change: ``pk`` ``change#{grant id}``, ``sk`` ``{updated_at}#{action}``; ``action`` (``set``,
  ``pause``, ``resume``, ``remove``; from Nylas' notifications ``register``, ``expire``,
  ``reauthenticate``, ``delete``, ``sweep``), ``by``, ``before`` and ``after`` (JSON text; absent when
  there was, or is, no record);
- a grant's life, from Nylas: ``pk`` ``grant``, ``sk`` ``life#{grant id}``; ``settings`` (JSON text: the
  life, not settings), ``updated_at`` (below, "a grant's life").

Why every record in one partition: the replier reads the whole registry with one ``Query`` through
Powertools Parameters' DynamoDB provider (``get_multiple``), cached for ``registry_max_age_seconds``, so
a grant with no record costs no request of its own (its absence is known from the cached listing),
and a change is seen by every container within the bound. The change items are the audit trail
``make grants show`` prints (who changed what, when).
"""

import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import boto3
from aws_lambda_powertools.utilities.parameters import DynamoDBProvider
from botocore.exceptions import ClientError

from replyonce.rules.grant_life import GrantLife

GRANTS_PARTITION = "grant"
CHANGE_PREFIX = "change#"
ATTR_PK = "pk"
ATTR_SK = "sk"
ATTR_SETTINGS = "settings"
ATTR_UPDATED_AT = "updated_at"
ATTR_UPDATED_BY = "updated_by"
ATTR_ACTION = "action"
ATTR_BY = "by"
ATTR_BEFORE = "before"
ATTR_AFTER = "after"


def _record_of(text: Any) -> Any:
    """A record's settings as stored (JSON text) → the JSON value; text that does not parse is returned as
    it is, for ``replyonce.grants.overlay`` to refuse with the others (a record is never half-read)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


class GrantRegistry:
    """The replier's read of the registry: every grant's record, cached for a bounded age.

    Parameters
    ----------
    table_name:
        ``GRANT_REGISTRY_TABLE``.
    session:
        The boto3 session the provider's client is made from (the replier's, injectable).
    max_age_seconds:
        How old the cached listing may be (``registry_max_age_seconds``): a change takes effect within it.
    """

    def __init__(
        self, table_name: str, *, session: boto3.session.Session | None = None, max_age_seconds: int = 60
    ) -> None:
        session = session or boto3.session.Session()
        self._provider = DynamoDBProvider(
            table_name,
            key_attr=ATTR_PK,
            sort_attr=ATTR_SK,
            value_attr=ATTR_SETTINGS,
            boto3_session=session,
        )
        self._max_age = max_age_seconds
        self._table = table_name
        # A grant's life read strongly consistent (a deleted grant's send, an expired grant's resume).
        self._client = session.client("dynamodb")
        # Issue 42, fair to every mailbox: one refresh per container, and each listing parsed once.
        self._lock = threading.Lock()
        self._texts: dict[str, Any] | None = None
        self._records: dict[str, Any] = {}
        self._lives: dict[str, GrantLife] = {}

    def records(self) -> dict[str, Any]:
        """Each registered grant's record (setting name → JSON value), by grant id; not to be changed.

        Why a lock: a batch's threads all ask at once, and Powertools' cache has none, so when it
        expires each of them would read the whole registry (up to 10 ``Query``s of every record, per
        container, a minute). One reads it; the others wait for that read and take its listing. And
        the listing is parsed once per read, not per record: with a thousand grants that is a thousand
        JSON documents (``make bench-flood`` measures the cost per record).

        Raises
        ------
        GetParameterError
            The table could not be read (Powertools wraps DynamoDB's error); nothing is cached then.
        """
        return self._listing()[0]

    def lives(self) -> dict[str, "GrantLife"]:
        """What Nylas said of each grant (its life), from the same cached ``Query`` as the records."""
        return self._listing()[1]

    def _listing(self) -> tuple[dict[str, Any], dict[str, GrantLife]]:
        """The records and the lives of the registry's one cached ``Query``, parsed once per read."""
        with self._lock:
            texts = self._provider.get_multiple(GRANTS_PARTITION, max_age=self._max_age)
            if texts is not self._texts:  # Powertools hands back its cached dict until it reads again
                self._records = {
                    grant_id: _record_of(text)
                    for grant_id, text in texts.items()
                    if not grant_id.startswith(LIFE_PREFIX)
                }
                self._lives = {
                    key.removeprefix(LIFE_PREFIX): life_of(text)
                    for key, text in texts.items()
                    if key.startswith(LIFE_PREFIX)
                }
                self._texts = texts
            return self._records, self._lives

    def life_now(self, grant_id: str) -> "GrantLife":
        """The grant's life as last written (a strongly consistent read, one request)."""
        stored = read_life(self._client, self._table, grant_id)
        return stored.life if stored else GrantLife()

    def not_deleted_check(self, grant_id: str) -> dict[str, Any]:
        """:func:`not_deleted_check` on this registry's table: what the state store's write carries."""
        return not_deleted_check(self._table, grant_id)


# ---- the operator's reads and writes (make grants), strongly consistent ------------------------------


@dataclass(frozen=True)
class StoredGrant:
    """A grant's record as stored, with who wrote it last."""

    grant_id: str
    record: Any
    updated_at: str = ""
    updated_by: str = ""
    # The settings as stored, byte for byte: what a change is conditioned on.
    text: str = ""


@dataclass(frozen=True)
class Change:
    """One change of a grant's record: what, by whom, when."""

    grant_id: str
    at: str
    action: str
    by: str
    before: Any = None
    after: Any = None


def _stored(item: Mapping[str, Any]) -> StoredGrant:
    text = item.get(ATTR_SETTINGS, {}).get("S", "")
    return StoredGrant(
        grant_id=item[ATTR_SK]["S"],
        record=_record_of(text),
        text=text,
        updated_at=item.get(ATTR_UPDATED_AT, {}).get("S", ""),
        updated_by=item.get(ATTR_UPDATED_BY, {}).get("S", ""),
    )


def list_grants(client: Any, table: str) -> list[StoredGrant]:
    """Every grant's record, by grant id (consistent reads: what the operator just wrote)."""
    grants: list[StoredGrant] = []
    for page in client.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="#pk = :pk",
        ExpressionAttributeNames={"#pk": ATTR_PK},
        ExpressionAttributeValues={":pk": {"S": GRANTS_PARTITION}},
        ConsistentRead=True,
    ):
        grants.extend(
            _stored(item) for item in page["Items"] if not item[ATTR_SK]["S"].startswith(LIFE_PREFIX)
        )
    return grants


def read_grant(client: Any, table: str, grant_id: str) -> StoredGrant | None:
    """One grant's record, or ``None`` when it has none."""
    item = client.get_item(
        TableName=table,
        Key={ATTR_PK: {"S": GRANTS_PARTITION}, ATTR_SK: {"S": grant_id}},
        ConsistentRead=True,
    ).get("Item")
    return _stored(item) if item else None


def changes_of(client: Any, table: str, grant_id: str, limit: int = 10) -> list[Change]:
    """The grant's latest changes, newest first."""
    items = client.query(
        TableName=table,
        KeyConditionExpression="#pk = :pk",
        ExpressionAttributeNames={"#pk": ATTR_PK},
        ExpressionAttributeValues={":pk": {"S": CHANGE_PREFIX + grant_id}},
        ScanIndexForward=False,
        Limit=limit,
        ConsistentRead=True,
    )["Items"]
    return [
        Change(
            grant_id=grant_id,
            at=item[ATTR_SK]["S"].split("#", 1)[0],
            action=item[ATTR_ACTION]["S"],
            by=item[ATTR_BY]["S"],
            before=_record_of(item[ATTR_BEFORE]["S"]) if ATTR_BEFORE in item else None,
            after=_record_of(item[ATTR_AFTER]["S"]) if ATTR_AFTER in item else None,
        )
        for item in items
    ]


def _change_item(change: Change) -> dict[str, Any]:
    item = {
        ATTR_PK: {"S": CHANGE_PREFIX + change.grant_id},
        ATTR_SK: {"S": f"{change.at}#{change.action}"},
        ATTR_ACTION: {"S": change.action},
        ATTR_BY: {"S": change.by},
    }
    if change.before is not None:
        item[ATTR_BEFORE] = {"S": json.dumps(change.before, sort_keys=True)}
    if change.after is not None:
        item[ATTR_AFTER] = {"S": json.dumps(change.after, sort_keys=True)}
    return item


def write_change(client: Any, table: str, change: Change, read: StoredGrant | None) -> None:
    """Write the grant's new record (or delete it: ``change.after is None``) and the change, at once.

    One transaction: a record never changes without its change item (who, what, when), and the write is
    conditioned on the record being as the operator read it (``read``, byte for byte; ``None``: no
    record), so two operators' changes never overwrite each other unseen (DynamoDB cancels the
    transaction, ``TransactionCanceledException``: read again).
    """
    key = {ATTR_PK: {"S": GRANTS_PARTITION}, ATTR_SK: {"S": change.grant_id}}
    if read is None:
        condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(#pk)"}
        names = {"#pk": ATTR_PK}
        values: dict[str, Any] = {}
    else:
        condition = {"ConditionExpression": "#settings = :before"}
        names = {"#settings": ATTR_SETTINGS}
        values = {":before": {"S": read.text}}
    if change.after is None:
        record: dict[str, Any] = {"Delete": {"TableName": table, "Key": key}}
        target = record["Delete"]
    else:
        item = {
            **key,
            ATTR_SETTINGS: {"S": json.dumps(change.after, sort_keys=True)},
            ATTR_UPDATED_AT: {"S": change.at},
            ATTR_UPDATED_BY: {"S": change.by},
        }
        record = {"Put": {"TableName": table, "Item": item}}
        target = record["Put"]
    target.update(condition, ExpressionAttributeNames=names)
    if values:
        target["ExpressionAttributeValues"] = values
    client.transact_write_items(
        TransactItems=[record, {"Put": {"TableName": table, "Item": _change_item(change)}}]
    )


# ---- a grant's life, from Nylas (issue 42): its own items, written by the replier --------------------
#
# A third kind of item: ``pk`` ``grant``, ``sk`` ``life#{grant id}``; ``settings`` (JSON text of what Nylas'
# lifecycle notifications said of the grant, ``replyonce.rules.grant_life.GrantLife``: the attribute the
# provider reads, whatever the item) and ``updated_at``. In the records' partition so the replier's one
# cached ``Query`` reads both (no request more per cache period); an item of its own, apart from the
# grant's record, on purpose: the operator's ``make grants set/pause/remove`` and Nylas' notifications
# never condition on, or overwrite, each other's writes — an operator's own pause stays when Nylas says the
# grant was re-authenticated, and an expiry stays when an operator changes the grant's mode. Each life
# change is written with its change item (``pk`` ``change#{grant}``, ``by`` ``nylas:{type}``), so ``make
# grants show`` lists it beside the operator's. The replier reads every life with the records' ``Query``,
# and a single life strongly consistent where the cache is not enough (a deleted grant's send, an
# expired grant's resume). No grant id begins with ``life#`` (Nylas' are UUIDs; ``make grants`` refuses).

LIFE_PREFIX = "life#"
ATTR_LIFE = ATTR_SETTINGS
NYLAS_PREFIX = "nylas:"
"""``by`` of a change Nylas' notification made (``nylas:grant.expired``): who, in ``make grants show``."""


def life_of(text: Any) -> GrantLife:
    """A stored life (JSON text) → :class:`GrantLife`; unreadable text reads as a life Nylas said nothing
    of, never as a grant deleted or paused by mistake (and is logged by the caller that wrote it)."""
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return GrantLife()
    if not isinstance(value, Mapping):
        return GrantLife()
    known = {f.name: f.type for f in fields(GrantLife)}
    return GrantLife(**{k: v for k, v in value.items() if k in known and isinstance(v, int | str | bool)})


def life_text(life: GrantLife) -> str:
    return json.dumps(asdict(life), sort_keys=True)


@dataclass(frozen=True)
class StoredLife:
    """A grant's life as stored, and its text byte for byte (what a change is conditioned on)."""

    grant_id: str
    life: GrantLife
    text: str
    updated_at: str = ""


def _life_key(grant_id: str) -> dict[str, Any]:
    return {ATTR_PK: {"S": GRANTS_PARTITION}, ATTR_SK: {"S": LIFE_PREFIX + grant_id}}


def _stored_life(item: Mapping[str, Any]) -> StoredLife:
    text = item.get(ATTR_LIFE, {}).get("S", "")
    return StoredLife(
        item[ATTR_SK]["S"].removeprefix(LIFE_PREFIX),
        life_of(text),
        text,
        updated_at=item.get(ATTR_UPDATED_AT, {}).get("S", ""),
    )


def read_life(client: Any, table: str, grant_id: str) -> StoredLife | None:
    """One grant's life, strongly consistent; ``None``: Nylas never told the stack of it."""
    item = client.get_item(TableName=table, Key=_life_key(grant_id), ConsistentRead=True).get("Item")
    return _stored_life(item) if item else None


# How a life that never said deleted reads in its text (``life_text``: sorted keys, ``deleted_at`` never the
# last), for a condition: DynamoDB cannot parse the JSON, but it can find a substring. A string value that
# spelt the same would be escaped (``\\"``), so only the key itself matches.
_NEVER_DELETED = tuple(f'"deleted_at": 0{end}' for end in (",", "}"))


def not_deleted_check(table: str, grant_id: str) -> dict[str, Any]:
    """The grant's life as one item of a ``TransactWriteItems`` (a ``ConditionCheck``): it holds while
    Nylas has not said the grant was deleted (no life item: Nylas never said anything of the grant).

    Why (issue 46): the replier's send of a stored reply is preceded by the write that stores it; with
    this check in it, the strongly consistent read of the life before the send (issue 42) is the same
    request. A life text the condition cannot read as alive (written by hand, unreadable) fails it:
    the caller reads the life then (``read_life``), which decides as before.
    """
    return {
        "ConditionCheck": {
            "TableName": table,
            "Key": _life_key(grant_id),
            "ConditionExpression": "attribute_not_exists(#sk) OR contains(#life, :alive) "
            "OR contains(#life, :alive_last)",
            "ExpressionAttributeNames": {"#sk": ATTR_SK, "#life": ATTR_LIFE},
            "ExpressionAttributeValues": {
                ":alive": {"S": _NEVER_DELETED[0]},
                ":alive_last": {"S": _NEVER_DELETED[1]},
            },
        }
    }


def list_lives(client: Any, table: str) -> dict[str, StoredLife]:
    """Every grant's life, by grant id (consistent reads: for ``make grants list/show``)."""
    lives: dict[str, StoredLife] = {}
    for page in client.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="#pk = :pk AND begins_with(#sk, :life)",
        ExpressionAttributeNames={"#pk": ATTR_PK, "#sk": ATTR_SK},
        ExpressionAttributeValues={":pk": {"S": GRANTS_PARTITION}, ":life": {"S": LIFE_PREFIX}},
        ConsistentRead=True,
    ):
        for item in page["Items"]:
            stored = _stored_life(item)
            lives[stored.grant_id] = stored
    return lives


class LifeChanged(Exception):
    """The grant's life is no longer as it was read (another record of the grant wrote it): read again."""


def write_life(
    client: Any, table: str, grant_id: str, life: GrantLife, read: StoredLife | None, change: Change
) -> None:
    """Write the grant's new life and its change item at once, conditioned on the life as ``read``.

    Raises
    ------
    LifeChanged
        Another writer changed it since ``read`` (DynamoDB cancelled the transaction): nothing written.
    """
    item = {**_life_key(grant_id), ATTR_LIFE: {"S": life_text(life)}, ATTR_UPDATED_AT: {"S": change.at}}
    put: dict[str, Any] = {"TableName": table, "Item": item}
    if read is None:
        put.update(ConditionExpression="attribute_not_exists(#pk)", ExpressionAttributeNames={"#pk": ATTR_PK})
    else:
        put.update(
            ConditionExpression="#life = :before",
            ExpressionAttributeNames={"#life": ATTR_LIFE},
            ExpressionAttributeValues={":before": {"S": read.text}},
        )
    try:
        client.transact_write_items(
            TransactItems=[{"Put": put}, {"Put": {"TableName": table, "Item": _change_item(change)}}]
        )
    except ClientError as refused:
        if refused.response.get("Error", {}).get("Code") == "TransactionCanceledException":
            raise LifeChanged(str(refused)) from None
        raise


def register_new(client: Any, table: str, grant_id: str, record: Mapping[str, Any], change: Change) -> bool:
    """Give a grant Nylas just created its first record, unless it has one; whether it was written.

    Conditioned on no record (``write_change`` with nothing read): an operator's record, however it came
    to be, is never overwritten by a notification.
    """
    try:
        write_change(client, table, replace(change, before=None, after=dict(record)), None)
    except ClientError as refused:
        if refused.response.get("Error", {}).get("Code") == "TransactionCanceledException":
            return False
        raise
    return True
