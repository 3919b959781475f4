"""Prompts: Python functions that return the messages of a prompt template.

The parameters are the prompt's arguments. They travel as strings, so ``days: int`` accepts
``"3"``; a missing required argument is a protocol error (-32602), not a tool-style result.

A prompt function may return a ``str`` (one user message), a :class:`~mcpkit.types.PromptMessage`,
a content block (a user message holding it), a ``GetPromptResult``, or a list of any of these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from ._errors import InvalidParams
from ._signature import ArgumentError, ToolSignature, inspect_function
from .types import CONTENT_TYPES, GetPromptResult, Icon, Prompt, PromptArgument, PromptMessage

__all__ = ["PromptRegistry", "to_messages"]


@dataclass(slots=True)
class _Prompt:
    fn: Callable[..., Any]
    signature: ToolSignature
    wire: dict[str, Any]
    tags: frozenset[str] = frozenset()  # for filtering (Server.disable(tags=...)); never sent


class PromptRegistry:
    """The prompts of one server."""

    def __init__(self) -> None:
        self.prompts: dict[str, _Prompt] = {}

    def add(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        icons: list[Icon] | None,
        meta: dict[str, Any] | None,
        skip_types: tuple[type, ...],
    ) -> Prompt:
        prompt_name = name or fn.__name__
        if prompt_name in self.prompts:
            raise ValueError(f"a prompt named {prompt_name!r} is already registered")
        signature = inspect_function(fn, skip_types=skip_types, strict=False)
        required = set(signature.input_schema.get("required", []))
        arguments = [
            PromptArgument(
                name=arg,
                description=schema.get("description"),
                required=arg in required,
            )
            for arg, schema in signature.input_schema.get("properties", {}).items()
        ]
        given: dict[str, Any] = {
            "title": title,
            "description": description if description is not None else signature.description,
            "icons": icons,
            "meta": meta,
        }
        definition = Prompt(
            name=prompt_name,
            arguments=arguments or None,
            **{k: v for k, v in given.items() if v is not None},
        )
        listed = msgspec.to_builtins(definition)
        for entry in listed.get("arguments", ()):
            # False is PromptArgument.required's default, so left out; prompts/list has always said it.
            entry.setdefault("required", False)
        self.prompts[prompt_name] = _Prompt(fn, signature, listed)
        return definition

    def find(self, name: Any, arguments: Any) -> tuple[_Prompt, dict[str, Any]]:
        """The prompt called *name* and its bound arguments.

        Raises:
            InvalidParams: no such prompt, or the arguments are missing or malformed.
        """
        if not isinstance(name, str):
            raise InvalidParams("prompts/get requires params.name (a string)")
        prompt = self.prompts.get(name)
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name}")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams("prompts/get params.arguments must be an object of strings")
        try:
            return prompt, prompt.signature.bind(arguments)
        except ArgumentError as exc:
            raise InvalidParams(f"prompt {name!r}: {exc}") from None


def to_messages(value: Any) -> dict[str, Any]:
    """What a prompt function returned, as a ``GetPromptResult`` dict."""
    if isinstance(value, GetPromptResult):
        return msgspec.to_builtins(value)  # type: ignore[no-any-return]
    items = value if isinstance(value, (list, tuple)) else [value]
    messages: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, PromptMessage):
            messages.append(msgspec.to_builtins(item))
        elif isinstance(item, str):
            messages.append({"role": "user", "content": {"type": "text", "text": item}})
        elif isinstance(item, CONTENT_TYPES):
            messages.append({"role": "user", "content": msgspec.to_builtins(item)})
        elif isinstance(item, dict) and "role" in item and "content" in item:
            messages.append(item)
        else:
            raise TypeError(
                f"a prompt cannot return {type(item).__name__}: use str, PromptMessage or content blocks"
            )
    return {"messages": messages}
