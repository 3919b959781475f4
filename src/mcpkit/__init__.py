"""mcpkit: the Model Context Protocol for Python: servers, clients, every revision.

Layers, each importing only from its own and lower ones (``tests/test_layers.py`` keeps it so):

* L0 protocol, no I/O: ``_jsonrpc``, ``_errors``, ``_versions``, ``_methods``, ``_state``,
  ``_connection``, ``_pagination``, ``_signature*``, ``types``... and ``transports.base`` (the
  contract every transport keeps);
* L1 runtime: ``session`` (the async JSON-RPC endpoint), ``context``, ``tasks``;
* L2 transports: move whole messages (stdio, memory, HTTP);
* L2.5 extensions: ``skills``;
* L3 the APIs people use: ``lowlevel``, ``server``, ``client``;
* L4 ``cli``, ``demo``, and this module, which only re-exports: every type a public signature uses
  is importable from here (``tests/test_package.py`` checks it).

Importing the package loads no HTTP stack and no pydantic: a stdio server is spawned on every host
start, so its import time is everyone's start-up time.
"""

import importlib
import typing

from ._connection import Scope, ServerConnection
from ._errors import (
    ConnectionClosed,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    LocalProtocolError,
    MCPError,
    MethodNotFound,
    MissingClientCapability,
    ProtocolError,
    RemoteProtocolError,
    RequestTimeout,
    ResourceNotFound,
    RPCError,
    ToolError,
    TransportError,
    UnsupportedProtocolVersion,
)
from ._headers import header
from ._jsonrpc import ErrorResponse, Notification, Request, Response
from ._transport import Transport
from ._versions import LATEST_HANDSHAKE_VERSION, LATEST_VERSION, SUPPORTED_VERSIONS, Era
from .auth import AuthInfo
from .compose import Server
from .context import Context
from .kernel import Endpoint, InProcess, Outbound, ServerSession
from .lifespan import StartupError
from .lowlevel import Listener, LowLevelServer
from .server import (
    Arg,
    Call,
    CallNext,
    Forward,
    Middleware,
    ToolOptions,
    ToolTransform,
    UIResourceOptions,
)
from .session import Peer
from .tasks import InMemoryTaskStore, TaskRecord, TaskRunner, TaskShare, TaskStore
from .types import (
    APP_MIME_TYPE,
    UI_EXTENSION,
    Annotations,
    AudioContent,
    CallToolResult,
    Completion,
    ContentBlock,
    CreateMessageResult,
    ElicitResult,
    EmbeddedResource,
    GetPromptResult,
    Icon,
    ImageContent,
    Implementation,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourceTemplate,
    Root,
    SamplingMessage,
    TextContent,
    Tool,
    ToolAnnotations,
    supports_ui,
)

if typing.TYPE_CHECKING:  # loaded on first use (see __getattr__ below)
    from ._signature_elicit import ElicitationContentError, ElicitationForm, Titles, elicitation_form
    from .client import MAY_HAVE_MISSED, Backoff, Client, Subscription
    from .client.auth import (
        ClientCredentials,
        FileTokenStore,
        IdentityAssertion,
        JWTBearer,
        MemoryTokenStore,
        OAuth,
        OAuthError,
        TokenStore,
    )
    from .compose.openapi import RouteMap
    from .fleet import MemoryState, SharedState
    from .skills import Skill, SkillResource, SkillVerificationError
    from .telemetry import Telemetry
    from .transports.http.server.event_store import EventStore

#: Names served by :func:`__getattr__`, from the module that defines them. Importing mcpkit must not
#: load an HTTP stack, and authorization needs one; and a server (spawned on every host start, so its
#: start-up is everyone's) has no use for the client or the skills library, a tenth of the import;
#: nor, until it asks for them, for elicitation forms, a fleet's shared state or telemetry.
_LAZY: typing.Final = {
    **dict.fromkeys(("MAY_HAVE_MISSED", "Backoff", "Client", "Subscription"), "mcpkit.client"),
    "RouteMap": "mcpkit.compose.openapi",
    **dict.fromkeys(
        (
            "ClientCredentials",
            "FileTokenStore",
            "IdentityAssertion",
            "JWTBearer",
            "MemoryTokenStore",
            "OAuth",
            "OAuthError",
            "TokenStore",
        ),
        "mcpkit.client.auth",
    ),
    **dict.fromkeys(("Skill", "SkillResource", "SkillVerificationError"), "mcpkit.skills"),
    **dict.fromkeys(
        ("ElicitationContentError", "ElicitationForm", "Titles", "elicitation_form"),
        "mcpkit._signature_elicit",
    ),
    "EventStore": "mcpkit.transports.http.server.event_store",
    **dict.fromkeys(("MemoryState", "SharedState"), "mcpkit.fleet"),
    "Telemetry": "mcpkit.telemetry",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "APP_MIME_TYPE",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_VERSION",
    "MAY_HAVE_MISSED",
    "SUPPORTED_VERSIONS",
    "UI_EXTENSION",
    "Annotations",
    "Arg",
    "AudioContent",
    "AuthInfo",
    "Backoff",
    "Call",
    "CallNext",
    "CallToolResult",
    "Client",
    "ClientCredentials",
    "Completion",
    "ConnectionClosed",
    "ContentBlock",
    "Context",
    "CreateMessageResult",
    "ElicitResult",
    "ElicitationContentError",
    "ElicitationForm",
    "EmbeddedResource",
    "Endpoint",
    "Era",
    "ErrorResponse",
    "EventStore",
    "FileTokenStore",
    "Forward",
    "GetPromptResult",
    "HeaderMismatch",
    "Icon",
    "IdentityAssertion",
    "ImageContent",
    "Implementation",
    "InMemoryTaskStore",
    "InProcess",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "JWTBearer",
    "Listener",
    "LocalProtocolError",
    "LowLevelServer",
    "MCPError",
    "MemoryState",
    "MemoryTokenStore",
    "MethodNotFound",
    "Middleware",
    "MissingClientCapability",
    "Notification",
    "OAuth",
    "OAuthError",
    "Outbound",
    "Peer",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ProtocolError",
    "RPCError",
    "ReadResourceResult",
    "RemoteProtocolError",
    "Request",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceNotFound",
    "ResourceTemplate",
    "Response",
    "Root",
    "RouteMap",
    "SamplingMessage",
    "Scope",
    "Server",
    "ServerConnection",
    "ServerSession",
    "SharedState",
    "Skill",
    "SkillResource",
    "SkillVerificationError",
    "StartupError",
    "Subscription",
    "TaskRecord",
    "TaskRunner",
    "TaskShare",
    "TaskStore",
    "Telemetry",
    "TextContent",
    "Titles",
    "TokenStore",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolOptions",
    "ToolTransform",
    "Transport",
    "TransportError",
    "UIResourceOptions",
    "UnsupportedProtocolVersion",
    "elicitation_form",
    "header",
    "supports_ui",
]
