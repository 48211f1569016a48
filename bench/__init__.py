"""ReplyOnce benchmarks: ``python -m bench`` (``make bench``) measures and writes ``docs/performance.md``.

Request counts are deterministic and also asserted in ``tests/integration/test_budgets.py``;
times are benchmarks, reported with min/median/max over repeated rounds and the
machine they ran on, never asserted.
"""
