"""What a host config says, whatever dialect it was written in: the servers and the rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from .._secrets import DEFAULT_REDACT
from .policy import Policy

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REDACT",
    "DEFAULT_REFRESH_SECONDS",
    "AuditConfig",
    "HostConfig",
    "ServerConfig",
    "Transport",
]

Transport = Literal["stdio", "http", "sse"]

#: Upstream sessions of one server open at once for callers (``maxSessions`` in the config).
DEFAULT_MAX_SESSIONS: Final = 8
#: Seconds an unused caller's session stays open (``sessionIdleTimeout`` in the config).
DEFAULT_IDLE_SECONDS: Final = 300.0
#: Seconds between re-listings of the lists a server does not announce changes of (``refreshInterval``).
DEFAULT_REFRESH_SECONDS: Final = 300.0


@dataclass(frozen=True)
class ServerConfig:
    """One server of the host, whatever dialect it was written in.

    Attributes:
        key: the normalised name (see :mod:`.naming`): the prefix of its tools' and prompts' names.
        name: the name as the file wrote it.
        transport: ``stdio`` (``command``), ``http`` (Streamable HTTP at ``url``) or ``sse``
            (2024-11-05 HTTP+SSE at ``url``).
        enabled: false for a server the file disables; it is listed with that status, never started.
        allow_tools, deny_tools: tool-name globs; a tool is kept when it matches an allow glob (or
            there are none) and no deny glob.
        timeout: seconds a request may wait for its answer (``None``: the client's default).
        max_concurrency: requests in flight to this server at once (``None``: no limit).
        max_sessions: upstream sessions of their own open at once for the gateway's callers that
            the server may ask questions (see :mod:`.pool`).
        session_idle_timeout: seconds such a session stays open unused.
        refresh_interval: seconds between re-listings of the lists (tools, resources, prompts) a
            server does not announce ``listChanged`` for (``None``: never).
    """

    key: str
    name: str
    transport: Transport
    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    allow_tools: tuple[str, ...] = ()
    deny_tools: tuple[str, ...] = ()
    timeout: float | None = None
    max_concurrency: int | None = None
    protocol_version: str | None = None
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle_timeout: float = DEFAULT_IDLE_SECONDS
    refresh_interval: float | None = DEFAULT_REFRESH_SECONDS

    @property
    def target(self) -> str | list[str]:
        """What :class:`~mcpkit.Client` is given: the URL or the command line."""
        return self.url if self.url is not None else list(self.command)


@dataclass(frozen=True)
class AuditConfig:
    """Where the audit log goes (JSON lines), and what its ``redact`` list adds to the words that
    make an argument's key secret (:mod:`mcpkit._secrets`' rule, shared with the RedactArguments
    middleware); an entry ``!name`` shows the values of keys named *name* after all (see :mod:`.audit`)."""

    path: Path
    redact: tuple[str, ...] = DEFAULT_REDACT


@dataclass
class HostConfig:
    """Everything a :class:`~mcpkit.host.Host` needs: servers in file order, the policy, the audit
    log, renames and roots."""

    servers: dict[str, ServerConfig]
    dialect: str = "mcpServers"
    policy: Policy = field(default_factory=Policy)
    audit: AuditConfig | None = None
    rename: dict[str, str] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)
    #: Entries the host cannot run (Goose's built-in extensions), with the reason.
    skipped: dict[str, str] = field(default_factory=dict)
    source: str = ""
