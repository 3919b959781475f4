"""How the host names what its servers offer (``server__tool``): the rules live in
:mod:`mcpkit._naming`, shared with :meth:`mcpkit.Server.mount`, which names mounted tools the same way."""

from .._naming import MAX_NAME, SEPARATOR, exposed_name, normalise_key, split, valid_tool_name

__all__ = ["MAX_NAME", "SEPARATOR", "exposed_name", "normalise_key", "split", "valid_tool_name"]
