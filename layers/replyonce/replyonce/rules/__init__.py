"""The pure rules: which messages are answered, to whom, with what text, and what the mailbox
shows. Values in, values out: no I/O, no clock, no AWS. A rule imports the package root's
values and other rules, nothing above (tests/static/test_core_layers.py)."""
