"""The friendly server: typed Python functions become MCP tools, resources and prompts.

:class:`Server` is composed of one part per feature (:mod:`.tools`, :mod:`.resources`, :mod:`.apps`,
:mod:`.prompts`) over the state they share (:mod:`._base`), all on :class:`~mcpkit.LowLevelServer`.
"""

from .._middleware import Call, CallNext, Middleware
from ._server import Server
from .apps import UIResourceOptions
from .tools import ToolOptions
from .transforms import Arg, Forward, ToolTransform

__all__ = [
    "Arg",
    "Call",
    "CallNext",
    "Forward",
    "Middleware",
    "Server",
    "ToolOptions",
    "ToolTransform",
    "UIResourceOptions",
]
