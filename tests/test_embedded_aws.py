"""The embedded AWS behaves as DynamoDB does where our guards depend on it, and stays its data's size.

Every reply commits with one ``TransactWriteItems``; unpatched moto keeps a
deep copy of the table per transaction, which killed a 10,000-notification
chaos run. Counting live table objects is machine-independent, unlike memory.
Leases, the recipient budget and the outbox are conditional writes: unpatched
moto lets two racing ones both pass their condition.
"""

import gc
import threading

import boto3
from moto.dynamodb.models.table import Table

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
