"""mcpkit: the Model Context Protocol for Python: servers, clients, every revision.

Layers, each depending only on the ones above it in this list:

* ``_jsonrpc``, ``_versions``, ``_state``, ``_connection``: the protocol core, no I/O;
* ``transports``: move whole messages (stdio, memory);
* ``session``: the async JSON-RPC endpoint;
* ``lowlevel``, ``server``, ``client``: the APIs people use.

Importing the package loads no HTTP stack and no pydantic: a stdio server is spawned on every host
start, so its import time is everyone's start-up time.
"""

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
from ._versions import LATEST_HANDSHAKE_VERSION, LATEST_VERSION, SUPPORTED_VERSIONS, Era
from .client import Client
from .context import Context
from .lowlevel import LowLevelServer
from .server import Server
from .skills import Skill, SkillResource, SkillVerificationError
from .types import (
    Annotations,
    AudioContent,
    CallToolResult,
    Completion,
    ContentBlock,
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
    TextContent,
    Tool,
    ToolAnnotations,
)

__version__ = "0.1.0"

__all__ = [
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_VERSION",
    "SUPPORTED_VERSIONS",
    "Annotations",
    "AudioContent",
    "CallToolResult",
    "Client",
    "Completion",
    "ConnectionClosed",
    "ContentBlock",
    "Context",
    "EmbeddedResource",
    "Era",
    "GetPromptResult",
    "HeaderMismatch",
    "Icon",
    "ImageContent",
    "Implementation",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalProtocolError",
    "LowLevelServer",
    "MCPError",
    "MethodNotFound",
    "MissingClientCapability",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ProtocolError",
    "RPCError",
    "ReadResourceResult",
    "RemoteProtocolError",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceNotFound",
    "ResourceTemplate",
    "Server",
    "Skill",
    "SkillResource",
    "SkillVerificationError",
    "TextContent",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "TransportError",
    "UnsupportedProtocolVersion",
    "header",
]
