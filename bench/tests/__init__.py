"""The benchmarks' own tests: their pure parts (parsing, the cost arithmetic), never a timed assertion.

Here, not under ``tests/``: the product's tests stand on ``devstack/`` and never on ``bench/``
(``tests/static/test_support_imports.py``); these are the benchmarks' own.
"""
