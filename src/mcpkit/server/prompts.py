"""Prompts and completion: functions that make messages, and suggestions for their arguments."""

from __future__ import annotations

import inspect
from collections.abc import Callable
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
from ._base import F, ServerBase, invoke


class PromptsAPI(ServerBase):
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
    ) -> Any:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., title=...)``."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, title=title, description=description, icons=icons, meta=meta)
            return fn

        return register(fn) if fn is not None else register

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        """Register *fn* as a prompt (see :meth:`prompt` for the options)."""
        for key in ("name", "title", "description", "icons", "meta"):
            options.setdefault(key, None)
        definition = self._prompts.add(fn, skip_types=(Context,), **options)
        if "prompts/list" not in self._handlers:
            self.set_handler("prompts/list", self._list_prompts)
            self.set_handler("prompts/get", self._get_prompt)
        self._changed("prompts")
        return definition

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt. Raises ``KeyError``."""
        del self._prompts.prompts[name]
        self._changed("prompts")

    async def _list_prompts(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        prompts = self._prompts.prompts
        shown, cursor = paginate(list(prompts), params.get("cursor"), self.page_size)
        return page("prompts", [shape_listed(prompts[n].wire, ctx.scope) for n in shown], cursor)

    async def _get_prompt(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
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
