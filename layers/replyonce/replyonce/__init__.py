"""ReplyOnce: reply to each Nylas email exactly once.

The package is shipped as a Lambda layer (``layers/replyonce``) and holds all
domain code; ``functions/*/app.py`` only wire Powertools and call into it.
"""
