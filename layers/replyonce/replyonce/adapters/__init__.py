"""The adapters: each outside service (Nylas, DynamoDB, SQS, S3, Secrets Manager, Bedrock) behind a
port or a small class. An adapter imports the package root and the rules, never the core or the
shell (tests/static/test_core_layers.py)."""
