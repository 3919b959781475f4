"""What a server lists, when it is more than its own registrations: mounted servers, hidden
components, transformed tools. One component model for hand-written and composed servers alike.

A server with none of these answers its lists and calls as before (the fast paths hold). Once it
has one (:attr:`CatalogAPI._composed`), its list handlers gather the whole catalogue here:

1. its own components (the registries);
2. each mounted server's, asked through that server's own handlers and middleware with the
   caller's :class:`~mcpkit.Context` (so a proxy or a low-level server mounts as well as a
   :class:`~mcpkit.Server`), tools and prompts renamed ``namespace__name`` (:mod:`mcpkit._naming`),
   resources keeping their URIs unless one is already listed (then ``namespace+uri``);
3. transforms (:mod:`.transforms`) rename and reshape tools;
4. what is disabled, server-wide or for the calling session, is left out (and refused when called).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Final, Literal

from .. import _naming
from .._compat import shape_listed, shape_tool
from .._errors import InvalidParams, MethodNotFound, ResourceNotFound
from .._pagination import page, paginate
from ..context import Context
from ..tasks import TASKS_EXTENSION
from ._base import ServerBase
from .visibility import Filter, session_filter

if TYPE_CHECKING:
    from .._connection import Scope
    from ..lowlevel import LowLevelServer

__all__ = ["CatalogAPI", "Kind", "Mount"]

Kind = Literal["tools", "prompts", "resources", "resourceTemplates"]
#: Each kind's list method, and the key of the component's identity in its wire form.
LIST_METHOD: Final[dict[str, str]] = {
    "tools": "tools/list",
    "prompts": "prompts/list",
    "resources": "resources/list",
    "resourceTemplates": "resources/templates/list",
}
IDENTITY: Final[dict[str, str]] = {
    "tools": "name",
    "prompts": "name",
    "resources": "uri",
    "resourceTemplates": "uriTemplate",
}
#: What a parent answers for a kind once a mounted server offers it.
_METHODS_OF: Final[dict[str, tuple[str, ...]]] = {
    "prompts": ("prompts/list", "prompts/get"),
    "resources": ("resources/list", "resources/templates/list", "resources/read"),
}
_MAX_PAGES: Final = 1000  # a mounted server's list is read to its end, but not forever
_MAX_ROUTES: Final = 4096  # routes remembered (see CatalogAPI._route)


class Mount:
    """A server mounted in another, and the names it was last listed under. (A plain class: a
    dataclass compiles its methods from source at import, which every server's start-up pays.)"""

    __slots__ = ("collided", "names", "namespace", "prefix", "server")

    def __init__(self, server: LowLevelServer, namespace: str | None) -> None:
        self.server = server
        self.namespace = namespace
        #: exposed name -> the mounted server's own name, as last listed (names that were hashed).
        self.names: dict[str, str] = {}
        #: URIs listed under ``namespace+uri`` because another component had them first.
        self.collided: set[str] = set()
        #: ``namespace__``: what every exposed name of the mount starts with (made once: it is read
        #: on every routed call).
        self.prefix = f"{namespace}{_naming.SEPARATOR}" if namespace is not None else ""

    def exposed(self, name: str) -> str:
        if self.namespace is None:
            return name
        shown = _naming.exposed_name(self.namespace, name)
        if shown != f"{self.namespace}{_naming.SEPARATOR}{name}":
            self.names[shown] = name
        return shown

    def own_name(self, exposed: str) -> str | None:
        """The mounted server's name for *exposed*, if it is one of this mount's."""
        if self.namespace is None:
            return exposed
        prefix = self.prefix
        if exposed.startswith(prefix) and len(exposed) > len(prefix):
            return self.names.get(exposed) or exposed[len(prefix) :]
        return self.names.get(exposed)

    def own_uri(self, exposed: str) -> str:
        """The mounted server's URI (or template) for one listed here as *exposed*."""
        prefix = self.uri_prefix
        return (
            exposed[len(prefix) :] if self.namespace is not None and exposed.startswith(prefix) else exposed
        )

    @property
    def uri_prefix(self) -> str:
        # A URI scheme takes letters, digits, + - . (RFC 3986): the namespace's _ become -.
        return f"{(self.namespace or 'mounted').replace('_', '-')}+"


class CatalogAPI(ServerBase):
    """Mounting servers, and the lists and routes of a composed server."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mounts: list[Mount] = []
        self._mounted_in: list[CatalogAPI] = []
        self._tool_transforms: dict[str, Any] = {}
        self._composed = False
        #: Namespaced names already routed (see :meth:`_route`): a routed call is a dict lookup.
        self._routes: dict[str, tuple[Mount, str]] = {}
        #: What is disabled for everyone (``server.disable``).
        self.hidden = Filter()

    def _recompose(self) -> None:
        """Whether lists and calls go through the catalogue (mounts, transforms, hidden parts): kept
        as a plain attribute, read on every call."""
        self._composed = bool(self._mounts) or bool(self.hidden) or bool(self._tool_transforms)

    # -- mounting ----------------------------------------------------------------------------------

    def mount(self, server: LowLevelServer, namespace: str | None = None) -> None:
        """List *server*'s tools, prompts and resources as this server's, and route their calls to it.

        With *namespace*, tools and prompts are listed as ``namespace__name`` (the gateway's rule,
        :mod:`mcpkit._naming`); resources keep their URIs, unless this server or an earlier mount
        already lists the URI: then it is listed as ``namespace+uri``. Without *namespace*, names
        are kept, and a name this server already has is an error here. The mount is live: what
        *server* adds or removes later is listed, and its list changes reach this server's
        clients. Its lifespan runs with this one's, its tasks run on this server's task runner,
        and its middleware runs inside this server's.

        Raises:
            ValueError: *namespace* is not a valid key, is taken, or without one a name clashes;
                *server* is this server or mounts it.
        """
        if server is self or (isinstance(server, CatalogAPI) and self in server._mount_tree()):
            raise ValueError("a server cannot mount itself")
        if namespace is not None:
            if not namespace or _naming.normalise_key(namespace) != namespace:
                raise ValueError(
                    f"invalid namespace {namespace!r}: use A-Z a-z 0-9 - . and single _ (not at either end)"
                )
            if any(mount.namespace == namespace for mount in self._mounts):
                raise ValueError(f"the namespace {namespace!r} is already mounted")
        elif isinstance(server, CatalogAPI):
            for kind, own, theirs in (
                ("tool", set(self._tools), set(server._tools)),
                ("prompt", set(self._prompts.prompts), set(server._prompts.prompts)),
            ):
                clash = own & theirs
                if clash:
                    raise ValueError(
                        f"mounting {server.info.name!r} without a namespace: {kind} {sorted(clash)[0]!r} is taken"
                    )
        self._mounts.append(Mount(server, namespace))
        self._routes.clear()
        self._recompose()
        if isinstance(server, CatalogAPI):
            server._mounted_in.append(self)
            server.tasks = self.tasks  # tasks/get and friends reach this server: its runner keeps them
        self.running.children.append(server.running)
        for kind in ("prompts", "resources"):
            self._offer(kind, server)
        self._changed("tools")

    def _mount_tree(self) -> list[CatalogAPI]:
        found: list[CatalogAPI] = [self]
        for mount in self._mounts:
            if isinstance(mount.server, CatalogAPI):
                found.extend(mount.server._mount_tree())
        return found

    def _offer(self, kind: str, server: LowLevelServer) -> None:
        """Answer *kind*'s methods here once *server* (mounted) answers them."""
        methods = _METHODS_OF.get(kind, ())
        if methods and methods[0] in server._handlers and methods[0] not in self._handlers:
            self._answer(kind)
        if "completion/complete" in server._handlers and "completion/complete" not in self._handlers:
            self.set_handler("completion/complete", self._complete)  # type: ignore[attr-defined]

    def _answer(self, kind: str) -> None:
        """Register this server's own handlers of *kind* (the resources and prompts APIs)."""
        getattr(self, f"_answer_{kind}")()

    # -- visibility --------------------------------------------------------------------------------

    def disable(self, *, names: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        """Hide tools, prompts and resources from every client, by name (a resource by its URI or
        template) or by tag: lists leave them out and calls of them are refused as if they did
        not exist. Clients are told their lists changed. See ``ctx.disable`` for one session."""
        self.hidden.disable(names, tags)
        self._recompose()
        for kind in ("tools", "prompts", "resources"):
            self._changed(kind)

    def enable(self, *, names: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        """Undo :meth:`disable` (a name enabled shows even if one of its tags is disabled)."""
        self.hidden.enable(names, tags)
        self._recompose()
        for kind in ("tools", "prompts", "resources"):
            self._changed(kind)

    def capabilities(self, scope: Scope) -> dict[str, Any]:
        """This server's capabilities, with tasks declared if a mounted server runs tasks (its
        tools are called through this one, ``tasks/get`` and friends answered here)."""
        caps = super().capabilities(scope)
        for mount in self._mounts:
            theirs = mount.server.capabilities(scope)
            if "tasks" in theirs and "tasks" not in caps:
                caps["tasks"] = theirs["tasks"]
            extension = theirs.get("extensions", {}).get(TASKS_EXTENSION)
            if extension is not None:
                caps["extensions"] = {**caps.get("extensions", {}), TASKS_EXTENSION: extension}
        return caps

    def _child_changed(self, kind: str, server: LowLevelServer) -> None:
        # A mounted server's list changed: it may offer a kind it did not before.
        self._offer(kind, server)
        self._changed(kind)

    # -- gathering ---------------------------------------------------------------------------------

    async def _own(self, kind: Kind, ctx: Context) -> list[dict[str, Any]]:
        """This server's own components of *kind*, shaped for the caller (no mounts)."""
        scope = ctx.scope
        if kind == "tools":
            return [shape_tool(self._tools[name].wire, scope) for name in self._own_tool_names(ctx)]
        if kind == "prompts":
            return [shape_listed(prompt.wire, scope) for prompt in self._prompts.prompts.values()]
        readers = self._resources.fixed if kind == "resources" else self._resources.templates
        return [shape_listed(reader.wire, scope) for reader in readers.values()]

    def _own_tool_names(self, ctx: Context) -> list[str]:
        raise NotImplementedError  # the tools' part provides it

    def _tags(self, kind: Kind, name: str) -> frozenset[str]:
        """The tags of this server's component *name* (own, or of a mounted Server)."""
        if kind == "tools":
            tool = self._tools.get(name)
            if tool is not None:
                return tool.tags
        elif kind == "prompts":
            prompt = self._prompts.prompts.get(name)
            if prompt is not None:
                return prompt.tags
        else:
            reader = self._resources.fixed.get(name) or self._resources.templates.get(name)
            if reader is not None:
                return reader.tags
        for mount in self._mounts:
            own = mount.own_name(name) if kind in ("tools", "prompts") else mount.own_uri(name)
            if own is not None and isinstance(mount.server, CatalogAPI):
                found = mount.server._tags(kind, own)
                if found:
                    return found
        return frozenset()

    async def catalog(self, kind: Kind, ctx: Context) -> list[dict[str, Any]]:
        """Every component of *kind* this server lists to *ctx*'s caller, in order, unpaged."""
        key = IDENTITY[kind]
        items = await self._own(kind, ctx)
        seen = {item[key] for item in items}
        for mount in self._mounts:
            known = len(mount.names)
            for item in await _listed(mount.server, LIST_METHOD[kind], ctx):
                identity = item.get(key)
                if not isinstance(identity, str):
                    continue
                if kind in ("tools", "prompts"):
                    shown = mount.exposed(identity)
                elif identity in seen:
                    mount.collided.add(identity)
                    shown = mount.uri_prefix + identity
                else:
                    mount.collided.discard(identity)
                    shown = identity
                if shown in seen:
                    continue  # without a namespace, this server's own comes first
                seen.add(shown)
                items.append({**item, key: shown} if shown != identity else item)
            if len(mount.names) != known:
                self._routes.clear()  # a name was shortened (hashed): routes are found again
        if kind == "tools" and self._tool_transforms:
            items = self._transformed(items, ctx.scope)
        hidden = self.hidden
        for_session = session_filter(ctx)
        if hidden or for_session:
            items = [item for item in items if not self._is_hidden(kind, item[key], ctx, hidden, for_session)]
        return items

    def _is_hidden(
        self,
        kind: Kind,
        name: str,
        ctx: Context,
        hidden: Filter | None = None,
        for_session: Filter | None = None,
    ) -> bool:
        hidden = self.hidden if hidden is None else hidden
        for_session = session_filter(ctx) if for_session is None else for_session
        if not hidden and not for_session:
            return False
        tags = self._tags(kind, self._untransformed(name) if kind == "tools" else name)
        return hidden.hides(name, tags) or (for_session is not None and for_session.hides(name, tags))

    def _read_hidden(self, uri: str, ctx: Context) -> bool:
        """Whether ``resources/read`` of *uri* is refused: the resource is hidden, or the template
        that would read it is."""
        hidden, for_session = self.hidden, session_filter(ctx)
        if not hidden and not for_session:
            return False
        if self._is_hidden("resources", uri, ctx, hidden, for_session):
            return True
        template = self._template_of(uri)
        return template is not None and self._is_hidden(
            "resourceTemplates", template, ctx, hidden, for_session
        )

    def _template_of(self, uri: str) -> str | None:
        """The template, as listed here, that reads *uri* (own, or of a mounted Server)."""
        if uri not in self._resources.fixed:
            for template, reader in self._resources.templates.items():
                if reader.template.match(uri) is not None:
                    return template
        for mount in self._mounts:
            if isinstance(mount.server, CatalogAPI):
                own = mount.own_uri(uri)
                found = mount.server._template_of(own)
                if found is not None:
                    return mount.uri_prefix + found if own != uri else found
        return None

    async def _list_page(self, kind: Kind, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """One page of the catalogue's *kind*: the composed server's list handler."""
        items = await self.catalog(kind, ctx)
        key = IDENTITY[kind]
        by_identity = {item[key]: item for item in items}
        shown, cursor = paginate(list(by_identity), params.get("cursor"), self.page_size)
        return page(kind, [by_identity[name] for name in shown], cursor)

    # -- routing -----------------------------------------------------------------------------------

    def _route(self, name: str) -> tuple[Mount, str] | None:
        """The mount a tool or prompt named *name* here belongs to, and its name there.

        A namespaced name's route depends only on the mounts and the names they shortened, so it
        is remembered until either changes (a mount, a list that shortens a new name); a name kept
        as it is (no namespace) depends on what each mounted server has now, and is looked for on
        every call."""
        found = self._routes.get(name)
        if found is not None:
            return found
        for mount in self._mounts:
            if mount.namespace is not None:
                own = mount.own_name(name)
                if own is not None:
                    found = mount, own
                    if len(self._routes) < _MAX_ROUTES:  # names a caller makes up are not kept forever
                        self._routes[name] = found
                    return found
        for mount in self._mounts:  # without a namespace: whoever has it
            if mount.namespace is None and _offers(mount.server, name):
                return mount, name
        return None

    async def _forward(self, method: str, name_key: str, params: dict[str, Any], ctx: Context) -> Any:
        """Answer a call of a mounted tool or prompt (by *name_key* in *params*) through its server."""
        name = params.get(name_key)
        routed = self._route(name) if isinstance(name, str) else None
        if routed is None:
            kind = "tool" if method == "tools/call" else "prompt"
            raise InvalidParams(f"Unknown {kind}: {name}")
        mount, own = routed
        return await mount.server.dispatch(method, {**params, name_key: own}, ctx)

    async def _read_mounted(self, params: dict[str, Any], ctx: Context) -> Any:
        """``resources/read`` of a URI this server does not have: the mount it is listed from."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read requires params.uri (a string)")
        for mount in self._mounts:
            if mount.namespace is not None and uri.startswith(mount.uri_prefix):  # listed prefixed
                own = uri[len(mount.uri_prefix) :]
                result = await mount.server.dispatch("resources/read", {**params, "uri": own}, ctx)
                return _contents_as(result, own, uri)
        for mount in self._mounts:
            if "resources/read" not in mount.server._handlers:
                continue
            try:
                return await mount.server.dispatch("resources/read", params, ctx)
            except ResourceNotFound:
                continue
        raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri})

    # -- subscriptions -----------------------------------------------------------------------------

    async def _subscriptions_changed(
        self, holder: object, uris: Collection[str], wanted: bool, ends: asyncio.Event | None = None
    ) -> None:
        """*holder* (a caller's session, or one ``subscriptions/listen`` stream) now subscribes to
        *uris* (or no longer, when not *wanted*; a session's go when *ends* is set): pass it on to
        the mounted servers, under their own URIs. This server keeps its own record (listeners);
        a server mounted here is told, and a server that reaches its resources elsewhere (a proxy,
        the gateway's forwarders) subscribes there. A server without this method is not told."""
        for mount in self._mounts:
            tell = getattr(mount.server, "_subscriptions_changed", None)
            if tell is not None:
                await tell(holder, [mount.own_uri(uri) for uri in uris], wanted, ends)

    def _exposed_uri(self, mount_server: LowLevelServer, uri: str) -> str:
        for mount in self._mounts:
            if mount.server is mount_server and uri in mount.collided:
                return mount.uri_prefix + uri
        return uri

    # -- transforms (see .transforms) ------------------------------------------------------------

    _tool_transforms: dict[str, Any]

    def _transformed(self, items: list[dict[str, Any]], scope: Scope) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _untransformed(self, name: str) -> str:
        return name


def _contents_as(result: Any, own: str, exposed: str) -> Any:
    """A read's contents under the URI they were asked by: ``namespace+uri`` names another
    resource than ``uri`` here (the parent's own, or an earlier mount's)."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return result
    renamed = [
        {**item, "uri": exposed} if isinstance(item, dict) and item.get("uri") == own else item
        for item in contents
    ]
    return {**result, "contents": renamed}


def _offers(server: LowLevelServer, name: str) -> bool:
    """Whether a server mounted without a namespace has the tool or prompt *name* (as far as can be
    told without asking it: a Server's registries and its own mounts)."""
    if isinstance(server, CatalogAPI):
        if name in server._tools or name in server._prompts.prompts:
            return True
        return server._route(name) is not None
    return True  # a server whose catalogue is not known here: let it answer


async def _listed(server: LowLevelServer, method: str, ctx: Context) -> Iterable[dict[str, Any]]:
    """Every item of a mounted server's list *method*, all pages, as it answers the caller."""
    if method not in server._handlers:
        return []
    key = method.split("/")[0] if method != "resources/templates/list" else "resourceTemplates"
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    for _ in range(_MAX_PAGES):
        try:
            result = await server.dispatch(method, params, ctx)
        except MethodNotFound:
            return items
        if not isinstance(result, dict):
            break
        found = result.get(key)
        if isinstance(found, list):
            items.extend(item for item in found if isinstance(item, dict))
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            break
        params = {"cursor": cursor}
    return items
