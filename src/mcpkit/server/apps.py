"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865): tools with an HTML view.

A UI resource is an HTML page served at a ``ui://`` URI as ``text/html;profile=mcp-app``; a tool
names it in ``_meta.ui.resourceUri``, and a host that declared the extension renders the tool's
results in that page (a sandboxed iframe that talks to the host over ``postMessage``, and may call
tools back through it). Every other client sees an ordinary tool with ordinary text content::

    server.ui_resource("ui://weather/view.html", Path("view.html"), prefers_border=True)

    @server.tool(ui="ui://weather/view.html")
    def weather(city: str) -> Forecast: ...

    @server.tool(ui="ui://weather/view.html", visibility=["app"])   # for the view's buttons only
    def refresh(city: str) -> Forecast: ...

What follows the spec (``modelcontextprotocol/ext-apps``, 2026-01-26):

* the server declares ``extensions: {"io.modelcontextprotocol/ui": {}}`` once it serves an app, in
  both eras (the extension names ``capabilities.extensions`` for the ``initialize`` handshake too);
* a tool's ``_meta.ui`` is ``{"resourceUri", "visibility"}``, and the deprecated flat
  ``_meta["ui/resourceUri"]`` is sent beside it for hosts that read only that;
* the resource is listed with ``_meta.ui`` (``csp``, ``permissions``, ``domain``,
  ``prefersBorder``), and read with the same ``_meta.ui`` on its contents, where hosts look for it.

What the spec leaves to the server, decided here: a tool visible to the app only
(``visibility=["app"]``) is left out of ``tools/list`` for clients that did not declare the
extension; with no host to keep it from the model, they would offer the model a tool meant for a
view. It stays callable by name. A tool naming a view that no resource serves is logged as a warning
(once) when a client connects: tools and pages may be registered in any order.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal, TypeAlias, TypedDict, Unpack, overload

from .._errors import RPCError
from ..context import Context
from ..types import APP_MIME_TYPE, ResourceContents
from ._base import F
from .resources import ResourcesAPI

__all__ = ["AppsAPI", "UIResourceOptions", "Visibility", "tool_ui_meta"]

logger = logging.getLogger("mcpkit.server")

Visibility: TypeAlias = Literal["model", "app"]

_SCHEME: Final = "ui://"
_VISIBILITY: Final = frozenset({"model", "app"})
_PERMISSIONS: Final = frozenset({"camera", "microphone", "geolocation", "clipboardWrite"})
_CSP_KEYS: Final = frozenset({"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"})
#: The flat key that came before ``_meta.ui.resourceUri`` ("deprecated ... removed before GA").
LEGACY_RESOURCE_URI: Final = "ui/resourceUri"


def tool_ui_meta(
    meta: dict[str, Any] | None, ui: str | None, visibility: Sequence[Visibility] | None
) -> dict[str, Any] | None:
    """A tool's ``_meta`` with ``ui`` (``resourceUri``, ``visibility``) added to what *meta* holds.

    ::

        >>> tool_ui_meta(None, "ui://w/view.html", ["app"])
        {'ui': {'resourceUri': 'ui://w/view.html', 'visibility': ['app']}, 'ui/resourceUri': 'ui://w/view.html'}

    Raises:
        ValueError: *ui* is not a ``ui://`` URI, or *visibility* is empty or names something else.
    """
    if ui is None and visibility is None:
        return meta
    entry: dict[str, Any] = dict((meta or {}).get("ui") or {})
    if ui is not None:
        _check_uri(ui)
        entry["resourceUri"] = ui
    if visibility is not None:
        chosen = list(visibility)
        if not chosen or not set(chosen) <= _VISIBILITY:
            raise ValueError(f"visibility must list 'model', 'app' or both, not {chosen!r}")
        entry["visibility"] = chosen
    result = {**(meta or {}), "ui": entry}
    if ui is not None:
        result[LEGACY_RESOURCE_URI] = ui
    return result


def app_only(wire: dict[str, Any]) -> bool:
    """Whether a listed tool is for views only (``visibility`` without ``"model"``)."""
    ui = (wire.get("_meta") or {}).get("ui")
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return isinstance(visibility, list) and "model" not in visibility


def _check_uri(uri: str) -> None:
    if not uri.startswith(_SCHEME) or len(uri) == len(_SCHEME):
        raise ValueError(f"an MCP App's resource URI starts with ui:// (got {uri!r})")


HTMLSource: TypeAlias = str | os.PathLike[str]
Permission: TypeAlias = Literal["camera", "microphone", "geolocation", "clipboardWrite"]


class UIResourceOptions(TypedDict, total=False):
    """What :meth:`AppsAPI.ui_resource` accepts besides the URI and the page."""

    name: str  # default: the URI's last segment
    title: str
    description: str
    csp: dict[str, list[str]]  # connectDomains, resourceDomains, frameDomains, baseUriDomains
    permissions: Sequence[Permission]
    domain: str  # a dedicated sandbox origin, in the host's format
    prefers_border: bool  # ask for a border and background (unset: the host decides)
    meta: dict[str, Any]  # more _meta for the resource and its contents


class AppsAPI(ResourcesAPI):
    """UI resources (:meth:`ui_resource`); tools name them with ``@server.tool(ui=...)``."""

    #: Views named by tools but not served, already warned about (once each).
    _warned_views: set[str] | None = None

    def warn_missing_views(self) -> None:
        """Log a warning for each view a tool names that no resource serves ("Resource MUST exist
        on the server"). Tools and pages may be registered in any order, so this runs when a client
        connects rather than at registration."""
        warned = self._warned_views if self._warned_views is not None else set()
        self._warned_views = warned
        for registered in self._tools.values():
            ui = (registered.wire.get("_meta") or {}).get("ui")
            uri = ui.get("resourceUri") if isinstance(ui, dict) else None
            if isinstance(uri, str) and uri not in warned and uri not in self._resources.fixed:
                warned.add(uri)
                logger.warning(
                    "tool %r names the view %s, which no resource serves", registered.wire["name"], uri
                )

    @overload
    def ui_resource(self, uri: str, html: HTMLSource, /, **options: Unpack[UIResourceOptions]) -> None: ...
    @overload
    def ui_resource(
        self, uri: str, html: None = None, /, **options: Unpack[UIResourceOptions]
    ) -> Callable[[F], F]: ...
    def ui_resource(
        self, uri: str, html: HTMLSource | None = None, /, **options: Unpack[UIResourceOptions]
    ) -> Callable[[F], F] | None:
        """Serve an MCP App's HTML at *uri* (``ui://...``), as ``text/html;profile=mcp-app``.

        *html* is the page (a string) or a file to read on each request (a path); without it this
        is a decorator for a function (sync or async, optionally taking ``Context``) returning the
        page (a sync one runs in a worker thread, as sync tools do). Options (:class:`UIResourceOptions`):
        ``name`` (default: the URI's last segment), ``title``, ``description``,
        ``csp`` (``{"connectDomains": [...], "resourceDomains": [...], "frameDomains": [...],
        "baseUriDomains": [...]}``: the origins the page may reach; none by default),
        ``permissions`` (any of ``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``),
        ``domain`` (a dedicated sandbox origin, in the host's format), ``prefers_border``
        (``True``/``False``: ask for a border; ``None``: the host decides), ``meta`` (more ``_meta``).

        ::

            server.ui_resource("ui://weather/view.html", "<!DOCTYPE html><html>...</html>")

            @server.ui_resource("ui://weather/live.html", csp={"connectDomains": ["https://api.example.com"]})
            def live() -> str:
                return render_page()

        Raises:
            ValueError: the URI is not ``ui://...``, an unknown option, CSP key or permission, or a
                string that is no HTML (a file name: pass a ``Path``).
        """
        if isinstance(html, str) and "<" not in html:
            # A file name given as a string would be served as the page's text.
            raise ValueError(f"{html!r} is not HTML; pass a pathlib.Path to serve a file")
        if html is not None:
            source = html

            async def static() -> HTMLSource:
                return source

            self._add_ui_resource(uri, static, dict(options))
            return None

        def register(fn: F) -> F:
            self._add_ui_resource(uri, fn, dict(options))
            return fn

        return register

    def _add_ui_resource(self, uri: str, fn: Callable[..., Any], options: dict[str, Any]) -> None:
        _check_uri(uri)
        known = {"name", "title", "description", "csp", "permissions", "domain", "prefers_border", "meta"}
        if unknown := sorted(set(options) - known):
            raise ValueError(f"unknown ui_resource option(s): {', '.join(unknown)}")
        ui = _resource_ui(options.get("csp"), options.get("permissions"), options.get("domain"))
        if options.get("prefers_border") is not None:
            ui["prefersBorder"] = bool(options["prefers_border"])
        meta = dict(options.get("meta") or {})
        if ui:
            meta["ui"] = {**meta.get("ui", {}), **ui}
        wants_context = any(
            p.annotation in (Context, "Context") for p in inspect.signature(fn).parameters.values()
        )
        is_async = inspect.iscoroutinefunction(fn)

        async def read(ctx: Context) -> ResourceContents:
            args = (ctx,) if wants_context else ()
            page = await fn(*args) if is_async else await asyncio.to_thread(fn, *args)
            if isinstance(page, os.PathLike):
                page = await asyncio.to_thread(_read_text, page)
            if not isinstance(page, str):
                raise RPCError(-32603, f"the page of {uri} is not text (got {type(page).__name__})")
            return ResourceContents(uri=uri, mime_type=APP_MIME_TYPE, text=page, meta=meta or None)

        name = options.get("name") or uri.removeprefix(_SCHEME).rstrip("/").rsplit("/", 1)[-1] or uri
        self.add_resource(
            read,
            uri,
            name=name,
            title=options.get("title"),
            description=options.get("description"),
            mime_type=APP_MIME_TYPE,
            meta=meta or None,
        )
        self._serves_apps = True


def _resource_ui(csp: Any, permissions: Iterable[str] | None, domain: str | None) -> dict[str, Any]:
    ui: dict[str, Any] = {}
    if csp is not None:
        if not isinstance(csp, dict) or not set(csp) <= _CSP_KEYS:
            raise ValueError(f"csp takes the keys {', '.join(sorted(_CSP_KEYS))}")
        ui["csp"] = {key: list(origins) for key, origins in csp.items()}
    if permissions is not None:
        chosen = list(permissions)
        if not set(chosen) <= _PERMISSIONS:
            raise ValueError(f"permissions are among {', '.join(sorted(_PERMISSIONS))}, not {chosen!r}")
        ui["permissions"] = {name: {} for name in chosen}
    if domain is not None:
        ui["domain"] = domain
    return ui


def _read_text(path: os.PathLike[str]) -> str:
    """What ``Path(path).read_text(encoding="utf-8")`` returns, without importing pathlib at start-up
    (every stdio server imports this module)."""
    with open(path, encoding="utf-8") as file:
        return file.read()
