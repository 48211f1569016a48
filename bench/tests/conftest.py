"""As ``python -m bench`` sets it before Powertools is imported (``bench/__main__.py``)."""

import os

os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "ReplyOnce")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
