"""The shell: the Lambda glue (webhook, the SQS consumer, a batch by thread) and the replier's loop
that carries out what ``replyonce.core`` decides through the adapters. The only package that
imports all the others (tests/static/test_core_layers.py)."""
