"""The embedded AWS stays the size of its data over a long run.

Every reply commits with one ``TransactWriteItems``; unpatched moto keeps a
deep copy of the table per transaction, which killed a 10,000-notification
chaos run. Counting live table objects is machine-independent, unlike memory.
"""

import gc

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
