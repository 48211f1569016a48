"""DynamoDB contention: the answers that mean "another request had this item just now", retried in place.

Why here and not in botocore: botocore's retry modes retry throttling,
transient server errors and ``TransactionInProgressException``, and offer no
way to add an error code; ``TransactionConflictException`` and a cancelled
transaction whose reason is ``TransactionConflict`` are answered to the
caller. On the state table they are routine: records waiting on a thread poll
its lease (a conditional ``UpdateItem`` on the thread item) while the holder's
settlement (``TransactWriteItems``) writes that same item, and DynamoDB
rejects whichever write meets the other in flight. Nothing was written by
the rejected request, so it is safe to send again — after the other one
ends, which takes milliseconds.

``IdempotentParameterMismatchException`` is the other answer of this kind: a
``ClientRequestToken`` used within its 10 minutes with other parameters. The
store derives a token per lease and per attempt (``replyonce.adapters.store``), so its
own retries never reuse one; were it met anyway, the transaction is sent
again under the next attempt's token — every transaction of the store is
conditioned on the lease or writes by key, so running it is what it means.
"""

import random
import time
from collections.abc import Callable

from botocore.exceptions import ClientError

from replyonce.exceptions import StateContended

TRANSACTION_CONFLICT = "TransactionConflict"
PARAMETER_MISMATCH = "IdempotentParameterMismatch"

CONTENTION_ATTEMPTS = 8
"""Tries of one write, the first included."""
CONTENTION_BACKOFF_SECONDS = 0.02
"""The first retry's longest wait; doubled per retry (full jitter)."""
CONTENTION_MAX_BACKOFF_SECONDS = 0.5
"""No wait between two tries is longer: the seven waits add up to 1.62 s at most, inside the
``record_margin_seconds`` (10 s) a record keeps for its bookkeeping."""


def contention_of(exc: ClientError) -> str | None:
    """Which contention DynamoDB answered (:data:`TRANSACTION_CONFLICT`, :data:`PARAMETER_MISMATCH`),
    or ``None`` for any other answer (a failed condition among them: that one is a decision)."""
    error = exc.response.get("Error", {})
    code = error.get("Code", "")
    if code == "TransactionConflictException":
        return TRANSACTION_CONFLICT
    if code in ("IdempotentParameterMismatchException", "IdempotentParameterMismatch"):
        return PARAMETER_MISMATCH
    if code == "TransactionCanceledException":
        codes = {r.get("Code") for r in exc.response.get("CancellationReasons", [])}
        # A condition that failed is an answer, whatever else the cancellation lists: not retried.
        if TRANSACTION_CONFLICT in codes and "ConditionalCheckFailed" not in codes:
            return TRANSACTION_CONFLICT
    return None


def retry_contended[T](
    write: Callable[[int], T],
    *,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    attempts: int = CONTENTION_ATTEMPTS,
) -> T:
    """``write(attempt)`` until DynamoDB answers it with something other than contention.

    Parameters
    ----------
    write:
        Sends the request; ``attempt`` (0, 1, ...) names the try, for a request token of its own.
    what:
        What is written, for the error.
    sleep:
        Injectable: tests count tries, never time them.
    attempts:
        Tries at most, the first included.

    Raises
    ------
    StateContended
        Still contended after ``attempts`` tries (a hot item, not a moment's overlap): the record
        goes back to the queue as a busy thread does.
    ClientError
        Any other answer, as DynamoDB gave it.
    """
    for attempt in range(attempts):
        try:
            return write(attempt)
        except ClientError as exc:
            kind = contention_of(exc)
            if kind is None:
                raise
            if attempt + 1 == attempts:
                raise StateContended(what, kind, attempts) from exc
        ceiling = min(CONTENTION_MAX_BACKOFF_SECONDS, CONTENTION_BACKOFF_SECONDS * 2**attempt)
        sleep(random.uniform(0, ceiling))  # noqa: S311 - jitter, not a secret
    raise AssertionError("unreachable")
