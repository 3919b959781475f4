"""Resources: readers by URI or template, listing, reading, subscriptions, skills."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from .._compat import shape_listed
from .._errors import (
    INTERNAL_ERROR,
    InvalidParams,
    ResourceNotFound,
    RPCError,
)
from .._resources import to_contents
from ..context import Context
from ..lowlevel import Listener
from ..types import (
    Annotations,
    Icon,
    Resource,
    ResourceTemplate,
)

if TYPE_CHECKING:
    from os import PathLike

    from ..skills import Skill

from .._pagination import page, paginate
from ._base import F, invoke
from .catalog import CatalogAPI
from .visibility import session_filter

logger = logging.getLogger("mcpkit.server")


class ResourcesAPI(CatalogAPI):
    """Resources and templates, subscriptions, and skills served as resources."""

    # -- resources ---------------------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        allow_traversal: bool = False,
        tags: Collection[str] = (),
    ) -> Callable[[F], F]:
        """Register a function that reads the resource *uri*, a plain URI or an RFC 6570 template.

        For a template (``notes://{id}``) the function's parameters are its variables. A variable
        whose decoded value holds a ``..`` segment, starts with ``/`` or holds a backslash or NUL is
        refused with -32602 before the function runs, unless ``allow_traversal=True``.
        ``tags`` label it for :meth:`disable` and :meth:`enable` (never sent to clients).
        """

        def register(fn: F) -> F:
            self.add_resource(
                fn, uri, name=name, title=title, description=description, mime_type=mime_type,
                size=size, annotations=annotations, icons=icons, meta=meta, allow_traversal=allow_traversal,
                tags=tags,
            )  # fmt: skip
            return fn

        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, **options: Any) -> Resource | ResourceTemplate:
        """Register *fn* as the reader of *uri* (see :meth:`resource` for the options)."""
        options.setdefault("name", None)
        for key in ("title", "description", "mime_type", "size", "annotations", "icons", "meta"):
            options.setdefault(key, None)
        options.setdefault("allow_traversal", False)
        tags = frozenset(options.pop("tags", ()))
        definition = self._resources.add(fn, uri, skip_types=(Context,), **options)
        reader = self._resources.fixed.get(uri) or self._resources.templates.get(uri)
        if reader is not None:
            reader.tags = tags
        if "resources/list" not in self._handlers:
            self._answer_resources()
        self._changed("resources")
        return definition

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or resource template. Raises ``KeyError``."""
        self._resources.remove(uri)
        self._changed("resources")

    async def resource_updated(self, uri: str) -> None:
        """Tell subscribers that the resource at *uri* changed (``notifications/resources/updated``)."""
        await self.notify_resource_updated(uri)

    def _answer_resources(self) -> None:
        self.set_handler("resources/list", self._list_resources)
        self.set_handler("resources/templates/list", self._list_templates)
        self.set_handler("resources/read", self._read_resource)
        self.set_handler("resources/subscribe", self._subscribe)
        self.set_handler("resources/unsubscribe", self._unsubscribe)

    async def _list_resources(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if self._composed or session_filter(ctx):
            return await self._list_page("resources", params, ctx)
        readers = self._resources.fixed
        shown, cursor = paginate(list(readers), params.get("cursor"), self.page_size)
        return page("resources", [shape_listed(readers[u].wire, ctx.scope) for u in shown], cursor)

    async def _list_templates(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if self._composed or session_filter(ctx):
            return await self._list_page("resourceTemplates", params, ctx)
        readers = self._resources.templates
        shown, cursor = paginate(list(readers), params.get("cursor"), self.page_size)
        return page("resourceTemplates", [shape_listed(readers[u].wire, ctx.scope) for u in shown], cursor)

    async def _read_resource(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read requires params.uri (a string)")
        if (self._composed or session_filter(ctx)) and self._read_hidden(uri, ctx):
            raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri})
        try:
            reader, kwargs = self._resources.find(uri)
        except ResourceNotFound:
            if not self._mounts:
                raise
            return await self._read_mounted(params, ctx)  # type: ignore[no-any-return]
        try:
            value = await invoke(reader.fn, reader.signature, kwargs, ctx)
        except (RPCError, asyncio.CancelledError):
            raise
        except Exception as exc:
            if not self.mask_errors:
                raise  # -32603 "Internal error: Type: message", logged with its traceback
            logger.error("reading %r raised %s", uri, type(exc).__name__, exc_info=exc)
            raise RPCError(INTERNAL_ERROR, "Internal error") from None
        return {"contents": to_contents(value, uri, reader.mime_type)}

    async def _subscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        listener = self._listener_for(params, ctx)
        listener.uris.add(params["uri"])
        if self._mounts:  # mounted servers subscribe where they read (a proxy, upstream)
            await self._subscriptions_changed(ctx.connection, [params["uri"]], True, ctx.peer.closed)
        return {}

    async def _unsubscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._listener_for(params, ctx).uris.discard(params["uri"])
        if self._mounts:
            await self._subscriptions_changed(ctx.connection, [params["uri"]], False)
        return {}

    def _listener_for(self, params: dict[str, Any], ctx: Context) -> Listener:
        if not isinstance(params.get("uri"), str):
            raise InvalidParams("params.uri (a string) is required")
        listener = self.session_listener(ctx.connection) if ctx.connection is not None else None
        if listener is None:
            raise InvalidParams("resource subscriptions need an initialized session")
        return listener

    # -- skills (the io.modelcontextprotocol/skills extension, SEP-2640) ----------------------------

    def add_skills(
        self, path: str | PathLike[str], *, prefix: str | None = None, directory_read: bool = True
    ) -> list[Skill]:
        """Serve the Agent Skills under *path*: each folder below it holding a ``SKILL.md`` (or *path*
        itself) is a skill, and its files become ``skill://<skill-path>/<file>`` resources.

        Args:
            path: the folder of skills (or of one skill).
            prefix: segments to put before every skill path (``"acme/billing"``).
            directory_read: also answer ``resources/directory/read`` (``directoryRead: true``).

        Returns:
            The entries of the skills added, as ``skills/list`` sends them.

        Raises:
            ValueError: no skill there, a ``SKILL.md`` without valid frontmatter, a name that breaks
                the naming rules or differs from its folder's, a skill over the size limits, or a
                URI already served.
        """
        from ..skills import SkillLibrary

        library = self._skills if self._skills is not None else SkillLibrary(self)
        added = library.add(path, prefix=prefix, directory_read=directory_read)
        self._skills = library  # declared once something is served
        return added
