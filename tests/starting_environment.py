"""The environment pytest was started with, captured before tests/conftest.py replaces AWS credentials.

The end-to-end suite's deployed target (tests/e2e, ``AWS_SAM_STACK_NAME``) needs the real ones.
"""

import os

STARTING_ENVIRONMENT = dict(os.environ)
