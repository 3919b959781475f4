"""The host: one program connected to many MCP servers, serving their tools as one set, governed.

:class:`Host` connects to every server of a :class:`HostConfig` (read from any host application's
config file by :func:`load_config`), lists and routes what they offer through a :class:`~mcpkit.Server`
with one forwarder per server mounted under its key (tools named ``server__tool``, :mod:`.naming`),
runs each call under a consent :class:`Policy` with rate limits, and writes an audit log.
``mcpkit host`` is its shell and ``mcpkit gateway`` serves its server (docs/host.md).

A composition of the client (one per server) and the server (the catalogue the servers make).
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
