"""The commands a hint prints, for the ``make serve`` that printed it: its port named unless it is 3000.

Why one module: ``make mail``, ``make redrive ARGS=--local`` and ``make shadow-report ARGS=--local`` read
port 3000 unless told otherwise, and that may be another person's stack (issue 47: a hint that dropped
a non-default port sent the next command there). Every hint that names a command builds it here.
"""

from urllib.parse import urlsplit

DEFAULT_PORT = 3000
"""Where ``make mail`` (``--port``) and the operator commands' ``--local`` look when told nothing."""


def port_option(base_url: str) -> str:
    """`` --port N`` for the ``make serve`` at ``base_url``; empty for the default port."""
    port = urlsplit(base_url).port
    return "" if port in (None, DEFAULT_PORT) else f" --port {port}"


def local_option(base_url: str) -> str:
    """``--local`` for the operator commands, with ``make serve``'s URL unless it is the default one."""
    if not port_option(base_url):
        return "--local"
    parts = urlsplit(base_url)
    return f"--local {parts.scheme}://{parts.netloc}"


def redrive_command(base_url: str) -> str:
    """The command that brings ``make serve``'s dead letters back to its queue."""
    local = local_option(base_url)
    return f"make redrive ARGS={local}" if local == "--local" else f'make redrive ARGS="{local}"'
