"""The host: one program connected to many MCP servers, serving their tools as one set, governed.

:class:`Host` connects to every server of a :class:`HostConfig` (read from any host application's
config file by :func:`load_config`), names their tools ``server__tool`` (:mod:`.naming`), routes
each call to its server under a consent :class:`Policy` with rate limits, and writes an audit log.
``mcpkit host`` is its shell and ``mcpkit gateway`` serves it as one MCP server (docs/host.md).

This package imports the client, never the server: it is a client of many servers.
"""

from ._host import Host
from ._read import ConfigError
from .audit import AuditLog
from .config import AuditConfig, HostConfig, ServerConfig, load_config, parse_config
from .governance import AskCallback, ConsentRequest
from .policy import Policy, Rule
from .pool import Lease
from .upstream import ServerStatus, Unavailable

__all__ = [
    "AskCallback",
    "AuditConfig",
    "AuditLog",
    "ConfigError",
    "ConsentRequest",
    "Host",
    "HostConfig",
    "Lease",
    "Policy",
    "Rule",
    "ServerConfig",
    "ServerStatus",
    "Unavailable",
    "load_config",
    "parse_config",
]
