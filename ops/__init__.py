"""Operator commands for a deployed ReplyOnce stack: ``python -m ops <command>`` (or ``make <command>``).

Why a package of small modules: each command is a plain function over injected clients (boto3,
the Nylas admin client, a process runner), so the tests drive the same code against moto and the
Nylas emulator that an operator drives against AWS and Nylas. ``ops.cli`` only parses arguments
and builds the real clients.

Commands: ``deploy``, ``set-api-key``, ``register-webhook``, ``rotate-secret``, ``redrive``,
``thread-state`` (``docs/operations.md`` is the runbook). None of them ever prints or writes a
secret to disk: secret values live in the stack's Secrets Manager secret and in memory only.
"""
