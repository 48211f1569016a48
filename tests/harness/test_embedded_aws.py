"""The embedded AWS behaves as DynamoDB does where our guards depend on it, and stays its data's size.

Every reply commits with one ``TransactWriteItems``; unpatched moto keeps a
deep copy of the table per transaction, which killed a 10,000-notification
chaos run. Counting live table objects is machine-independent, unlike memory.
Its rollback backup also cost a deep copy of each table per transaction, behind
which every other request waited: counted here in item copies, not seconds.
Leases, the recipient budget and the outbox are conditional writes: unpatched
moto lets two racing ones both pass their condition. And what DynamoDB answers
two writes that overlap on an item, which one request at a time never meets,
it answers on demand as DynamoDB words it.
"""

import gc
import threading

import boto3
import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models.dynamo_type import Item
from moto.dynamodb.models.table import Table

from devstack.embedded_aws import PARAMETER_MISMATCH, contention

TRANSACTIONS = 100


def _live_tables() -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, Table))


def test_transactions_leave_no_table_copies_behind(aws):
    dynamodb = boto3.client("dynamodb")
    table = aws.tables["StateTable"]
    before = _live_tables()

    for n in range(TRANSACTIONS):
        dynamodb.transact_write_items(
            TransactItems=[{"Put": {"TableName": table, "Item": {"pk": {"S": f"thread#{n}"}}}}]
        )

    assert dynamodb.scan(TableName=table, Select="COUNT")["Count"] == TRANSACTIONS
    # Unpatched moto: one more live Table per transaction (before + 100).
    assert _live_tables() == before


RACERS, ROUNDS, BUDGET = 8, 20, 3


def test_racing_conditional_writes_never_pass_the_same_condition(aws):
    # Eight workers racing for a budget of three, as a batch's threads (or three containers) racing for
    # one recipient's hour or one thread's lease do: at most three may win, every round.
    table = aws.tables["StateTable"]
    clients = [boto3.client("dynamodb") for _ in range(RACERS)]
    over_budget = []
    for round_ in range(ROUNDS):
        start, winners = threading.Barrier(RACERS), []

        def race(client, racer, key=f"recipient#race-{round_}", start=start, winners=winners):
            start.wait()
            try:
                client.update_item(
                    TableName=table,
                    Key={"pk": {"S": key}},
                    UpdateExpression="ADD intents :intent",
                    ConditionExpression="attribute_not_exists(intents) OR size(intents) < :budget",
                    ExpressionAttributeValues={
                        ":intent": {"SS": [str(racer)]},
                        ":budget": {"N": str(BUDGET)},
                    },
                )
                winners.append(racer)
            except client.exceptions.ConditionalCheckFailedException:
                pass

        threads = [threading.Thread(target=race, args=(c, n)) for n, c in enumerate(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if len(winners) != BUDGET:
            over_budget.append((round_, len(winners)))
    assert over_budget == []


@pytest.fixture
def ranged_table(aws):
    """A table with a range key: the other shape of moto's item maps."""
    dynamodb = boto3.client("dynamodb")
    dynamodb.create_table(
        TableName="ranged",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    yield "ranged"
    dynamodb.delete_table(TableName="ranged")


def _keyed(table: str, ranged: bool):
    def key(name: str) -> dict:
        return {"pk": {"S": name}, **({"sk": {"S": "r"}} if ranged else {})}

    return key


@pytest.mark.parametrize("ranged", [False, True], ids=["hash key", "hash and range key"])
def test_a_cancelled_transaction_leaves_every_item_as_it_was(aws, ranged_table, ranged):
    dynamodb = boto3.client("dynamodb")
    table = ranged_table if ranged else aws.tables["StateTable"]
    key = _keyed(table, ranged)
    dynamodb.put_item(TableName=table, Item={**key("updated"), "n": {"N": "1"}})
    dynamodb.put_item(TableName=table, Item={**key("deleted"), "n": {"N": "1"}})
    dynamodb.put_item(TableName=table, Item={**key("replaced"), "n": {"N": "1"}})
    # Every kind of write goes through before the last operation's condition fails.
    with pytest.raises(ClientError, match="TransactionCanceled"):
        dynamodb.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": table,
                        "Key": key("updated"),
                        "UpdateExpression": "SET n = :two",
                        "ExpressionAttributeValues": {":two": {"N": "2"}},
                    }
                },
                {"Delete": {"TableName": table, "Key": key("deleted")}},
                {"Put": {"TableName": table, "Item": {**key("replaced"), "n": {"N": "2"}}}},
                {"Put": {"TableName": table, "Item": {**key("created"), "n": {"N": "2"}}}},
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": key("missing"),
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )
    items = {i["pk"]["S"]: i["n"]["N"] for i in dynamodb.scan(TableName=table)["Items"] if "n" in i}
    assert items == {"updated": "1", "deleted": "1", "replaced": "1"}


def test_a_transaction_copies_the_items_it_names_not_its_table(aws, monkeypatch):
    dynamodb = boto3.client("dynamodb")
    table = aws.tables["StateTable"]
    for n in range(200):
        dynamodb.put_item(TableName=table, Item={"pk": {"S": f"message#{n}"}, "status": {"S": "replied"}})
    copied = []
    item_deepcopy = Item.__deepcopy__

    def counting(item, memo):
        copied.append(item)
        return item_deepcopy(item, memo)

    monkeypatch.setattr(Item, "__deepcopy__", counting)
    dynamodb.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": table,
                    "Key": {"pk": {"S": "message#7"}},
                    "UpdateExpression": "SET #s = :s",
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": {":s": {"S": "failed"}},
                }
            },
            {"Put": {"TableName": table, "Item": {"pk": {"S": "thread#1"}}}},
        ]
    )
    # Only the item the transaction changes in place is copied (for the backup and for moto's own
    # images of the update); unpatched, every one of the table's 200 items is copied.
    assert {item.hash_key.value for item in copied} == {"message#7"}


def test_an_update_that_grows_an_item_past_400_kb_is_refused_and_leaves_it_as_it_was(aws):
    # DynamoDB checks the item an update leaves; moto alone checks only the attributes set at its top,
    # so a map entry set by path (the outbox's ``SET outbox.#intent``) could grow an item unrefused.
    dynamodb = boto3.client("dynamodb")
    table = aws.tables["StateTable"]
    key = {"pk": {"S": "thread#grant#large"}}
    dynamodb.put_item(TableName=table, Item={**key, "outbox": {"M": {}}})

    def set_entry(name: str) -> None:
        dynamodb.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET outbox.#entry = :entry",
            ExpressionAttributeNames={"#entry": name},
            ExpressionAttributeValues={":entry": {"S": "x" * 250_000}},
        )

    set_entry("first")
    with pytest.raises(ClientError, match="Item size to update has exceeded"):
        set_entry("second")
    item = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    assert set(item["outbox"]["M"]) == {"first"}


def test_a_single_item_write_meeting_a_transaction_is_answered_as_dynamodb_answers_it(aws):
    dynamodb, table = boto3.client("dynamodb"), aws.tables["StateTable"]
    planned = contention("UpdateItem", key_prefix="thread#")
    with planned as answered, pytest.raises(ClientError) as refused:
        dynamodb.update_item(
            TableName=table, Key={"pk": {"S": "thread#t1"}}, UpdateExpression="SET a = :a",
            ExpressionAttributeValues={":a": {"N": "1"}},
        )  # fmt: skip
    # botocore does not retry it (the one planned answer was the only request): the caller sees it.
    assert refused.value.response["Error"]["Code"] == "TransactionConflictException"
    assert answered.answered == 1
    assert "Item" not in dynamodb.get_item(TableName=table, Key={"pk": {"S": "thread#t1"}})


def test_a_transaction_meeting_another_write_is_cancelled_with_a_conflict_on_that_item(aws):
    dynamodb, table = boto3.client("dynamodb"), aws.tables["StateTable"]
    items = [
        {"Put": {"TableName": table, "Item": {"pk": {"S": "message#g#m1"}}}},
        {"Put": {"TableName": table, "Item": {"pk": {"S": "thread#t1"}}}},
    ]
    conflict = contention("TransactWriteItems", key_prefix="thread#")
    with conflict, pytest.raises(ClientError) as cancelled:
        dynamodb.transact_write_items(TransactItems=items)
    error = cancelled.value.response
    assert error["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in error["CancellationReasons"]] == ["None", "TransactionConflict"]
    assert dynamodb.scan(TableName=table, Select="COUNT")["Count"] == 0  # nothing written
    dynamodb.transact_write_items(TransactItems=items)  # served again once the contention is over
    assert dynamodb.scan(TableName=table, Select="COUNT")["Count"] == 2


def test_a_request_token_used_with_other_parameters_is_refused(aws):
    dynamodb, table = boto3.client("dynamodb"), aws.tables["StateTable"]
    mismatch = contention("TransactWriteItems", answer=PARAMETER_MISMATCH)
    with mismatch, pytest.raises(ClientError) as refused:
        dynamodb.transact_write_items(
            TransactItems=[{"Put": {"TableName": table, "Item": {"pk": {"S": "thread#t1"}}}}],
            ClientRequestToken="a-token-used-before",
        )
    assert refused.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"
