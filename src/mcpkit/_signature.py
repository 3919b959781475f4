"""From a typed Python function to a tool's schemas, and from wire arguments to validated values.

Theory of operation: everything that can be worked out once is worked out at decoration time, in
:func:`inspect_function`. The parameters become one struct type (``msgspec.defstruct``), whose JSON
Schema is the tool's ``inputSchema`` and whose converter validates and converts a call's arguments in
a single C pass (:meth:`ToolSignature.bind`). The return annotation decides whether the tool has
structured output and, if so, its ``outputSchema`` (see :func:`_output` for the rules, which are the
official SDK's).

msgspec understands builtins, ``Literal``, enums, dataclasses, ``TypedDict``, msgspec structs,
``datetime``/``uuid`` and ``Annotated[..., msgspec.Meta(...)]``. Two other ways of annotating are
translated into ``msgspec.Meta`` here: a plain string in ``Annotated`` (a description) and the
``annotated_types`` constraints (``Ge``, ``MaxLen``...). A function whose types involve pydantic
(a ``BaseModel``, a pydantic dataclass, a ``pydantic.Field`` in ``Annotated`` or as a default) is
handed to pydantic instead, which is imported only then: most servers never pay for it.

Both engines validate like JSON, not like Python: ``"1"`` is not an ``int``, but an ISO string is a
``datetime`` and an array is a ``tuple``. ``strict=False`` relaxes that for prompts and resource
templates, whose arguments always travel as strings.

This module decides; the work is done in four others: :mod:`._signature_docstrings` (parameter
descriptions from ``Args:`` sections), :mod:`._signature_types` (what the engines share),
:mod:`._signature_msgspec` and :mod:`._signature_pydantic` (the two engines).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from ._signature_docstrings import parse_docstring
from ._signature_msgspec import MsgspecBuilder
from ._signature_types import ArgumentError, Builder, involves_pydantic, is_pydantic, rooted, to_json
from .types import CONTENT_TYPES, CallToolResult

__all__ = ["ArgumentError", "ToolSignature", "inspect_function"]


# Only __init__ and the frozen __setattr__ are written out: @dataclass would compile them, and the
# __repr__, __eq__ and __hash__ nothing uses, from source at every server's start-up (this module is
# imported by each). It is still a dataclass, so dataclasses.replace() makes the variants.
@dataclasses.dataclass(init=False, repr=False, eq=False, slots=True)
class ToolSignature:
    """What :func:`inspect_function` learned about a function."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wrapped_output: bool
    skipped: dict[str, Any]
    description: str | None
    is_async: bool
    _bind: Callable[[Any], dict[str, Any]]
    _serialize: Callable[[Any], Any]
    #: A sync function declared never to block (``blocking=False``): called on the event loop itself.
    inline: bool = False

    def __init__(
        self,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        wrapped_output: bool,
        skipped: dict[str, Any],
        description: str | None,
        is_async: bool,
        _bind: Callable[[Any], dict[str, Any]],
        _serialize: Callable[[Any], Any],
        inline: bool = False,
    ) -> None:
        initialize = object.__setattr__
        initialize(self, "input_schema", input_schema)
        initialize(self, "output_schema", output_schema)
        initialize(self, "wrapped_output", wrapped_output)
        initialize(self, "skipped", skipped)
        initialize(self, "description", description)
        initialize(self, "is_async", is_async)
        initialize(self, "_bind", _bind)
        initialize(self, "_serialize", _serialize)
        initialize(self, "inline", inline)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def bind(self, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Validate wire *arguments*; return keyword arguments for the function (injected ones aside).

        Raises:
            ArgumentError: an argument is missing, of the wrong type, or breaks a constraint.
        """
        return self._bind(arguments if arguments is not None else {})

    def serialize_output(self, value: Any) -> Any:
        """The structured form of a return value (``{"result": ...}`` when ``wrapped_output``)."""
        data = self._serialize(value)
        return {"result": data} if self.wrapped_output else data


def inspect_function(
    fn: Callable[..., Any], *, skip_types: tuple[type, ...] = (), strict: bool = True
) -> ToolSignature:
    """Describe *fn* as a tool. Parameters annotated with one of *skip_types* are left out (injected).

    ``strict=False`` accepts strings for numbers and booleans (``"3"`` for an ``int``): prompt
    arguments and URI template variables always travel as strings.

    Raises:
        TypeError: the function has ``*args``, ``**kwargs`` or positional-only parameters, or a
            parameter type that cannot be validated.
    """
    name = getattr(fn, "__qualname__", repr(fn))
    # A callable object's annotations are on its __call__ (get_type_hints refuses the object itself).
    annotated = fn if inspect.isroutine(fn) or isinstance(fn, type) else getattr(fn, "__call__", fn)  # noqa: B004
    try:
        hints = get_type_hints(annotated, include_extras=True)
    except NameError as exc:
        raise TypeError(f"{name}: cannot resolve its annotations ({exc})") from exc
    description, arg_docs = parse_docstring(inspect.getdoc(fn))
    params: list[tuple[str, Any, Any]] = []
    skipped: dict[str, Any] = {}
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(
                f"{name}: a tool's parameters are passed by name; {pname!r} is {param.kind.description}"
            )
        annotation = hints.get(pname, Any)
        if _is_skipped(annotation, skip_types):
            skipped[pname] = annotation
            continue
        if pname in arg_docs and not _has_description(annotation):
            annotation = Annotated[annotation, arg_docs[pname]]
        params.append((pname, annotation, param.default))
    output = hints.get("return", inspect.Signature.empty)
    use_pydantic = involves_pydantic(output) or any(
        involves_pydantic(tp) or is_pydantic(default) for _, tp, default in params
    )
    builder: Builder
    try:
        if use_pydantic:
            from ._signature_pydantic import PydanticBuilder  # imports pydantic: only for such functions

            builder = PydanticBuilder(strict)
        else:
            builder = MsgspecBuilder(strict)
        input_schema, bind = builder.arguments(params)
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from exc
    output_schema, wrapped, serialize = _output(output, builder)
    return ToolSignature(
        input_schema=input_schema,
        output_schema=output_schema,
        wrapped_output=wrapped,
        skipped=skipped,
        description=description,
        is_async=inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(annotated),
        _bind=bind,
        _serialize=serialize,
    )


# -- type inspection -------------------------------------------------------------------------------


def _is_skipped(annotation: Any, skip_types: tuple[type, ...]) -> bool:
    """Whether a parameter is injected: ``Context``, ``Context | None``, ``Annotated[Context, ...]``."""
    if not skip_types:
        return False
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_skipped(get_args(annotation)[0], skip_types)
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return len(members) == 1 and _is_skipped(members[0], skip_types)
    cls = origin or annotation  # a generic Context[...] too
    return isinstance(cls, type) and issubclass(cls, skip_types)


def _has_description(annotation: Any) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(m, str) or getattr(m, "description", None) for m in annotation.__metadata__)


def _is_content(tp: Any) -> bool:
    """Whether a return annotation declares content blocks, bare, in a list or as one arm of a union.

    Any arm suffices, as in the official SDK: such a tool may return blocks, which are no data.
    """
    origin = get_origin(tp)
    if origin is None:
        return isinstance(tp, type) and issubclass(tp, (*CONTENT_TYPES, CallToolResult))
    if origin is Annotated:
        return _is_content(get_args(tp)[0])
    if origin in (Union, types.UnionType, list, tuple, typing.Sequence, typing.Iterable):
        return any(_is_content(a) for a in get_args(tp))
    return False


def _output(annotation: Any, builder: Builder) -> tuple[dict[str, Any] | None, bool, Callable[[Any], Any]]:
    """The output schema, whether it is wrapped in ``{"result": ...}``, and the serializer.

    Nothing, ``Any``, ``None`` or content blocks: unstructured. A type that encodes as a JSON object
    (dataclass, TypedDict, struct, model, ``dict``): its schema. Anything else: wrapped.
    """
    if get_origin(annotation) is Annotated and get_args(annotation)[0] is CallToolResult:
        # Annotated[CallToolResult, Model]: the function builds its own result, with Model inside.
        declared = get_args(annotation)[1]
        if isinstance(declared, type) or get_origin(declared) is not None:
            annotation = declared
    if annotation in (inspect.Signature.empty, Any, None, type(None)) or _is_content(annotation):
        return None, False, to_json
    try:
        schema, serialize = builder.value(annotation)
    except Exception:  # a type that cannot be described makes unstructured output, as in the SDK
        return None, False, to_json
    shaped = rooted(schema)
    if shaped.get("type") == "object":
        return shaped, False, serialize
    wrapped = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    if "$defs" in schema:
        wrapped["$defs"] = schema.pop("$defs")
    return wrapped, True, serialize
