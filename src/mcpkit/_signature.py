"""From a typed Python function to a tool's schemas, and from wire arguments to validated values.

Theory of operation: everything that can be worked out once is worked out at decoration time, in
:func:`inspect_function`. The parameters become one struct type (``msgspec.defstruct``), whose JSON
Schema is the tool's ``inputSchema`` and whose decoder validates and converts a call's arguments in
a single C pass (:meth:`ToolSignature.bind`). The return annotation decides whether the tool has
structured output and, if so, its ``outputSchema``.

msgspec understands builtins, ``Literal``, enums, dataclasses, ``TypedDict``, msgspec structs,
``datetime``/``uuid`` and ``Annotated[..., msgspec.Meta(...)]``. Two other ways of annotating are
translated into ``msgspec.Meta`` here: a plain string in ``Annotated`` (a description) and the
``annotated_types`` constraints (``Ge``, ``MaxLen``...). A function whose types involve pydantic
(a ``BaseModel``, or a ``pydantic.Field`` in ``Annotated``) is handed to pydantic instead, which is
imported only then: most servers never pay for it.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Final, Union, get_args, get_origin, get_type_hints

import msgspec

from .types import CONTENT_TYPES, CallToolResult

__all__ = ["ArgumentError", "ToolSignature", "inspect_function"]

_ARGS_NAME: Final = "__ToolArguments__"
_REF_TEMPLATE: Final = "#/$defs/{name}"
# Constraint classes of annotated_types -> the msgspec.Meta keyword that means the same.
_ANNOTATED_TYPES: Final = {
    "Gt": ("gt", "gt"),
    "Ge": ("ge", "ge"),
    "Lt": ("lt", "lt"),
    "Le": ("le", "le"),
    "MultipleOf": ("multiple_of", "multiple_of"),
    "MinLen": ("min_length", "min_length"),
    "MaxLen": ("max_length", "max_length"),
}


class ArgumentError(ValueError):
    """The arguments of a tool call do not fit its signature. ``str()`` is meant for the model."""


@dataclasses.dataclass(frozen=True, slots=True)
class ToolSignature:
    """What :func:`inspect_function` learned about a function."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wrapped_output: bool
    skipped: dict[str, Any]
    description: str | None
    is_async: bool
    _bind: Callable[[dict[str, Any]], dict[str, Any]]
    _serialize: Callable[[Any], Any]

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
        TypeError: the function has ``*args``, ``**kwargs`` or positional-only parameters.
    """
    hints = get_type_hints(fn, include_extras=True)
    description, arg_docs = _parse_docstring(inspect.getdoc(fn))
    params: list[tuple[str, Any, Any]] = []
    skipped: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(f"{fn.__name__}: a tool's parameters must be nameable ({name!r} is not)")
        annotation = hints.get(name, Any)
        if _is_skipped(annotation, skip_types):
            skipped[name] = annotation
            continue
        if name in arg_docs and not _has_description(annotation):
            annotation = Annotated[annotation, arg_docs[name]]
        params.append((name, annotation, param.default))
    output = hints.get("return", inspect.Signature.empty)
    use_pydantic = any(_involves_pydantic(tp) for _, tp, _ in params) or _involves_pydantic(output)
    build = _PydanticBuilder(strict) if use_pydantic else _MsgspecBuilder(strict)
    input_schema, bind = build.arguments(params)
    output_schema, wrapped, serialize = _output(output, build)
    return ToolSignature(
        input_schema=input_schema,
        output_schema=output_schema,
        wrapped_output=wrapped,
        skipped=skipped,
        description=description,
        is_async=inspect.iscoroutinefunction(fn),
        _bind=bind,
        _serialize=serialize,
    )


# -- docstrings ------------------------------------------------------------------------------------

_SECTION: Final = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_SECTIONS: Final = frozenset({"Args", "Arguments", "Parameters"})
_ARG_LINE: Final = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The description without its Google-style ``Args:`` section, and that section's entries."""
    if not doc:
        return None, {}
    kept: list[str] = []
    args: dict[str, str] = {}
    in_args = False
    entry_indent: int | None = None
    current: str | None = None
    for line in doc.splitlines():
        header = _SECTION.match(line)
        if header:
            in_args = header.group(1) in _ARG_SECTIONS
            current, entry_indent = None, None
            if not in_args:
                kept.append(line)
            continue
        if not in_args:
            kept.append(line)
            continue
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:  # back at the margin: the section is over
            in_args = False
            kept.append(line)
            continue
        entry = _ARG_LINE.match(line)
        if entry and (entry_indent is None or indent <= entry_indent):
            entry_indent = indent
            current = entry.group(1).lstrip("*")
            args[current] = entry.group(2).strip()
        elif current is not None:  # a continuation line of the current entry
            args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(kept).strip() or None, args


# -- type inspection -------------------------------------------------------------------------------


def _is_skipped(annotation: Any, skip_types: tuple[type, ...]) -> bool:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return isinstance(annotation, type) and bool(skip_types) and issubclass(annotation, skip_types)


def _has_description(annotation: Any) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    for meta in annotation.__metadata__:
        if isinstance(meta, str) or getattr(meta, "description", None):
            return True
    return False


def _walk(tp: Any) -> typing.Iterator[Any]:
    """*tp* and every type and metadata object nested in it."""
    yield tp
    if get_origin(tp) is Annotated:
        yield from _walk(get_args(tp)[0])
        yield from tp.__metadata__
        return
    for arg in get_args(tp):
        yield from _walk(arg)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        for field_type in get_type_hints(tp, include_extras=True).values():
            yield from _walk(field_type)


def _involves_pydantic(tp: Any) -> bool:
    for item in _walk(tp):
        module = getattr(type(item), "__module__", "") if not isinstance(item, type) else ""
        if module.startswith("pydantic"):
            return True  # a FieldInfo or another pydantic marker in Annotated
        if isinstance(item, type) and any(c.__module__.startswith("pydantic") for c in item.__mro__[1:]):
            return True  # a BaseModel subclass (or a pydantic dataclass)
    return False


def _is_content(tp: Any) -> bool:
    """Whether a return annotation is made of content blocks (which means unstructured output)."""
    if isinstance(tp, type):
        return issubclass(tp, (*CONTENT_TYPES, CallToolResult))
    origin = get_origin(tp)
    if origin is Annotated:
        return _is_content(get_args(tp)[0])
    if origin in (Union, types.UnionType, list, tuple, typing.Sequence, typing.Iterable):
        args = [a for a in get_args(tp) if a is not type(None) and a is not Ellipsis]
        return bool(args) and all(_is_content(a) for a in args)
    return False


def _is_object_type(tp: Any) -> bool:
    """Whether *tp* serializes to a JSON object (then it is the output schema, unwrapped)."""
    if get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) is dict:
        return get_args(tp)[:1] in ((), (str,))
    if not isinstance(tp, type):
        return False
    if (
        tp is dict
        or dataclasses.is_dataclass(tp)
        or typing.is_typeddict(tp)
        or issubclass(tp, msgspec.Struct)
    ):
        return True
    return any(c.__module__.startswith("pydantic") and c.__name__ == "BaseModel" for c in tp.__mro__)


def _output(
    annotation: Any, build: _MsgspecBuilder | _PydanticBuilder
) -> tuple[dict[str, Any] | None, bool, Callable[[Any], Any]]:
    if annotation in (inspect.Signature.empty, Any, None, type(None)) or _is_content(annotation):
        return None, False, msgspec.to_builtins
    schema, serialize = build.value(annotation)
    if _is_object_type(annotation):
        return schema, False, serialize
    wrapped = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    defs = schema.pop("$defs", None)
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True, serialize


# -- msgspec ---------------------------------------------------------------------------------------


def _to_msgspec(tp: Any) -> Any:
    """Rewrite ``Annotated`` metadata that msgspec does not read into ``msgspec.Meta``, recursively."""
    origin = get_origin(tp)
    if origin is Annotated:
        inner, *metadata = get_args(tp)
        extra: dict[str, Any] = {}
        kept: list[Any] = []
        for meta in metadata:
            if isinstance(meta, str):
                extra["description"] = meta
            elif type(meta).__module__ == "annotated_types":
                extra.update(_annotated_types_meta(meta))
            elif isinstance(meta, msgspec.Meta):
                kept.append(meta)
        if extra:
            kept.append(msgspec.Meta(**extra))
        inner = _to_msgspec(inner)
        return Annotated[(inner, *kept)] if kept else inner
    args = get_args(tp)
    if not args or origin is typing.Literal:
        return tp
    converted = tuple(_to_msgspec(a) if a is not Ellipsis else a for a in args)
    if converted == args:
        return tp
    if origin in (Union, types.UnionType):
        return Union[converted]  # noqa: UP007 - a runtime union of computed members
    return origin[converted] if origin is not None else tp


def _annotated_types_meta(meta: Any) -> dict[str, Any]:
    name = type(meta).__name__
    if name in _ANNOTATED_TYPES:
        attribute, keyword = _ANNOTATED_TYPES[name]
        return {keyword: getattr(meta, attribute)}
    if name == "Interval":
        return {k: getattr(meta, k) for k in ("gt", "ge", "lt", "le") if getattr(meta, k) is not None}
    if name == "Len":
        bounds = {"min_length": meta.min_length}
        if meta.max_length is not None:
            bounds["max_length"] = meta.max_length
        return bounds
    return {}


def _split_components(schemas: tuple[dict[str, Any], ...], components: dict[str, Any]) -> dict[str, Any]:
    """One self-contained schema: the top schema with the named components under ``$defs``."""
    top = dict(schemas[0])
    ref = top.get("$ref", "")
    if ref.startswith("#/$defs/") and len(top) == 1:
        top = dict(components.pop(ref.removeprefix("#/$defs/")))
    if components:
        top["$defs"] = components
    return top


def _copier(value: Any) -> Callable[[], Any]:
    # A mutable default must not be shared between calls, as it would be in a plain function.
    return lambda: copy.deepcopy(value)


class _MsgspecBuilder:
    def __init__(self, strict: bool) -> None:
        self.strict = strict

    def arguments(self, params: list[tuple[str, Any, Any]]) -> tuple[dict[str, Any], Callable[..., Any]]:
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        for name, annotation, default in params:
            tp = _to_msgspec(annotation)
            if default is inspect.Parameter.empty:
                fields.append((name, tp))
            elif isinstance(default, (list, dict, set)) and default:
                fields.append((name, tp, msgspec.field(default_factory=_copier(default))))
            else:
                fields.append((name, tp, default))
        struct = msgspec.defstruct(_ARGS_NAME, fields, kw_only=True)
        schemas, components = msgspec.json.schema_components([struct], ref_template=_REF_TEMPLATE)
        schema = _split_components(schemas, dict(components))
        schema.pop("title", None)
        if not schema.get("required"):
            schema.pop("required", None)
        convert, asdict, error, strict = (
            msgspec.convert,
            msgspec.structs.asdict,
            msgspec.ValidationError,
            self.strict,
        )

        def bind(arguments: dict[str, Any]) -> dict[str, Any]:
            try:
                return asdict(convert(arguments, struct, strict=strict))
            except error as exc:
                raise ArgumentError(f"Invalid arguments: {exc}") from None

        return schema, bind

    def value(self, annotation: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        schemas, components = msgspec.json.schema_components(
            [_to_msgspec(annotation)], ref_template=_REF_TEMPLATE
        )
        return _split_components(schemas, dict(components)), msgspec.to_builtins


# -- pydantic --------------------------------------------------------------------------------------


class _PydanticBuilder:
    def __init__(self, strict: bool) -> None:  # pydantic stays lax: see bind()
        import pydantic  # only servers whose tools use pydantic types pay for this import

        self.pydantic = pydantic

    def arguments(self, params: list[tuple[str, Any, Any]]) -> tuple[dict[str, Any], Callable[..., Any]]:
        pydantic = self.pydantic
        definitions: dict[str, Any] = {}
        for name, annotation, default in params:
            tp = annotation
            if get_origin(tp) is Annotated:
                inner, *metadata = get_args(tp)
                metadata = [pydantic.Field(description=m) if isinstance(m, str) else m for m in metadata]
                tp = Annotated[(inner, *metadata)]
            definitions[name] = (tp, ... if default is inspect.Parameter.empty else default)
        model = pydantic.create_model(_ARGS_NAME, **definitions)
        schema = model.model_json_schema()
        schema.pop("title", None)
        for name, prop in schema.get("properties", {}).items():
            if prop.get("title") == name.replace("_", " ").title():
                del prop["title"]  # pydantic's made-up titles add nothing for a model
        # pydantic's lax mode (what its users expect) reads ISO strings as dates; its strict mode
        # would not, on Python input, so it is used either way.
        validate, error = model.model_validate, pydantic.ValidationError

        def bind(arguments: dict[str, Any]) -> dict[str, Any]:
            try:
                instance = validate(arguments)
            except error as exc:
                problems = "; ".join(
                    f"{e['msg']} at `$.{'.'.join(str(p) for p in e['loc'])}`"
                    for e in exc.errors(include_url=False)
                )
                raise ArgumentError(f"Invalid arguments: {problems}") from None
            return {name: getattr(instance, name) for name in definitions}

        return schema, bind

    def value(self, annotation: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        adapter = self.pydantic.TypeAdapter(annotation)
        schema = adapter.json_schema()

        def serialize(value: Any) -> Any:
            return adapter.dump_python(value, mode="json")

        return schema, serialize
