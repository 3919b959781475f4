"""Prompts and completion: functions that make messages, and suggestions for their arguments."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

import msgspec

from .._compat import shape_listed, shape_prompt_result
from .._errors import (
    InvalidParams,
)
from .._prompts import to_messages
from ..context import Context
from ..types import (
    Completion,
    Icon,
    Prompt,
)

if TYPE_CHECKING:
    pass

from .._pagination import page, paginate
from ._base import F, invoke
from .catalog import CatalogAPI
from .visibility import session_filter


class PromptsAPI(CatalogAPI):
    """Prompts and argument completion."""

    # -- prompts -----------------------------------------------------------------------------------

    def prompt(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        tags: Collection[str] = (),
    ) -> Any:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., title=...)``.
        ``tags`` label it for :meth:`disable` and :meth:`enable` (never sent to clients)."""

        def register(fn: F) -> F:
            self.add_prompt(
                fn, name=name, title=title, description=description, icons=icons, meta=meta, tags=tags
            )
            return fn

        return register(fn) if fn is not None else register

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        """Register *fn* as a prompt (see :meth:`prompt` for the options)."""
        tags = frozenset(options.pop("tags", ()))
        for key in ("name", "title", "description", "icons", "meta"):
            options.setdefault(key, None)
        definition = self._prompts.add(fn, skip_types=(Context,), **options)
        self._prompts.prompts[definition.name].tags = tags
        if "prompts/list" not in self._handlers:
            self._answer_prompts()
        self._changed("prompts")
        return definition

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt. Raises ``KeyError``."""
        del self._prompts.prompts[name]
        self._changed("prompts")

    def _answer_prompts(self) -> None:
        self.set_handler("prompts/list", self._list_prompts)
        self.set_handler("prompts/get", self._get_prompt)

    async def _list_prompts(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if self._composed or session_filter(ctx):
            return await self._list_page("prompts", params, ctx)
        prompts = self._prompts.prompts
        shown, cursor = paginate(list(prompts), params.get("cursor"), self.page_size)
        return page("prompts", [shape_listed(prompts[n].wire, ctx.scope) for n in shown], cursor)

    async def _get_prompt(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if self._composed or session_filter(ctx):
            name = params.get("name")
            if isinstance(name, str) and self._is_hidden("prompts", name, ctx):
                raise InvalidParams(f"Unknown prompt: {name}")
            if name not in self._prompts.prompts:
                return await self._forward("prompts/get", "name", params, ctx)  # type: ignore[no-any-return]
        prompt, kwargs = self._prompts.find(params.get("name"), params.get("arguments"))
        value = await invoke(prompt.fn, prompt.signature, kwargs, ctx)
        result = to_messages(value)
        description = prompt.wire.get("description")
        if description is not None:
            result.setdefault("description", description)
        return shape_prompt_result(result, ctx.scope)

    # -- completion --------------------------------------------------------------------------------

    def completion(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Register ``fn(value, arguments) -> list[str]`` suggesting values for an argument.

        Name either a *prompt* or a *resource* template, and the *argument* (or template variable).
        ``arguments`` holds the values the client has already filled in (``context.arguments``).
        A third parameter, if *fn* has one, gets the request's :class:`~mcpkit.Context`.
        """
        if (prompt is None) == (resource is None):
            raise ValueError("name exactly one of prompt= or resource=")
        key = (
            ("ref/prompt", prompt, argument)
            if prompt is not None
            else ("ref/resource", str(resource), argument)
        )

        def register(fn: F) -> F:
            takes_context = len(inspect.signature(fn).parameters) >= 3
            self._completers[key] = (fn, takes_context)
            self.set_handler("completion/complete", self._complete)
            return fn

        return register

    async def _complete_mounted(
        self, kind: Any, target: str, params: dict[str, Any], ctx: Context
    ) -> dict[str, Any] | None:
        """A completion for a mounted server's prompt or resource template, from that server."""
        ref = params["ref"]
        if kind == "ref/prompt" and target not in self._prompts.prompts:
            routed = self._route(target)
            if routed is not None:
                mount, own = routed
                return await mount.server.dispatch(  # type: ignore[no-any-return]
                    "completion/complete", {**params, "ref": {**ref, "name": own}}, ctx
                )
        elif (
            kind == "ref/resource"
            and target not in self._resources.templates
            and target not in self._resources.fixed
        ):
            for mount in self._mounts:
                uri = target
                if mount.namespace is not None and uri.startswith(mount.uri_prefix):
                    uri = uri[len(mount.uri_prefix) :]
                if "completion/complete" in mount.server._handlers:
                    try:
                        return await mount.server.dispatch(  # type: ignore[no-any-return]
                            "completion/complete", {**params, "ref": {**ref, "uri": uri}}, ctx
                        )
                    except InvalidParams:
                        continue  # not that server's template
        return None

    async def _complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref, argument = params.get("ref"), params.get("argument")
        if (
            not isinstance(ref, dict)
            or not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
        ):
            raise InvalidParams("completion/complete requires params.ref and params.argument.name")
        kind = ref.get("type")
        target = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
        if self._mounts and isinstance(target, str):
            forwarded = await self._complete_mounted(kind, target, params, ctx)
            if forwarded is not None:
                return forwarded
        if kind == "ref/prompt" and target not in self._prompts.prompts:
            raise InvalidParams(f"Unknown prompt: {target}")
        if (
            kind == "ref/resource"
            and target not in self._resources.templates
            and target not in self._resources.fixed
        ):
            raise InvalidParams(f"Unknown resource template: {target}")
        if kind not in ("ref/prompt", "ref/resource"):
            raise InvalidParams(f"unknown reference type {kind!r}")
        registered = self._completers.get((kind, target, argument["name"]))  # type: ignore[arg-type]
        if registered is None:
            return {"completion": {"values": [], "hasMore": False}}
        completer, takes_context = registered
        context = params.get("context")
        known = context.get("arguments", {}) if isinstance(context, dict) else {}
        value = argument.get("value", "")
        called = completer(value, known, ctx) if takes_context else completer(value, known)
        found = await called if inspect.isawaitable(called) else called
        if isinstance(found, Completion):
            return {"completion": msgspec.to_builtins(found)}
        values = [str(v) for v in found]
        # "The server MUST NOT return more than 100 items": the rest is counted, not sent.
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}
