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
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin, get_type_hints

import msgspec

from .types import CONTENT_TYPES, CallToolResult

if typing.TYPE_CHECKING:
    import pydantic
    import pydantic.json_schema

__all__ = ["ArgumentError", "ToolSignature", "inspect_function"]

_ARGS_NAME: Final = "__ToolArguments__"
_DEFS: Final = "#/$defs/"
# The annotated_types constraints are dataclasses whose field names are msgspec.Meta's keywords.
_META_KEYWORDS: Final = frozenset({"gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length"})


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
    _bind: Callable[[Any], dict[str, Any]]
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
    description, arg_docs = _parse_docstring(inspect.getdoc(fn))
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
    use_pydantic = _involves_pydantic(output) or any(
        _involves_pydantic(tp) or _is_pydantic(default) for _, tp, default in params
    )
    try:
        builder = _PydanticBuilder(strict) if use_pydantic else _MsgspecBuilder(strict)
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


# -- docstrings ------------------------------------------------------------------------------------

_GOOGLE_ARGS: Final = re.compile(r"(Args|Arguments|Parameters|Keyword Args|Keyword Arguments):")
_NUMPY_HEADER: Final = re.compile(r"-{3,}")
_NUMPY_ARGS: Final = frozenset({"Parameters", "Other Parameters"})
_ENTRY: Final = re.compile(r"\**(\w+)\s*(?:\([^)]*\))?\s*(?::\s*(.*))?")


def _parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The description without its parameter sections, and those sections' entries.

    Google style (``Args:`` then indented ``name (type): text``) and NumPy style (``Parameters``
    underlined, then ``name : type`` with the text indented below) are understood.
    """
    if not doc:
        return None, {}
    lines = doc.splitlines()
    kept: list[str] = []
    args: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].strip()
        numpy = (
            stripped in _NUMPY_ARGS and i + 1 < len(lines) and _NUMPY_HEADER.fullmatch(lines[i + 1].strip())
        )
        if not numpy and not _GOOGLE_ARGS.fullmatch(stripped):
            kept.append(line)
            i += 1
            continue
        header_indent = _indent(line)
        i += 2 if numpy else 1
        entry_indent: int | None = None
        current: str | None = None
        while i < len(lines):
            line, stripped = lines[i], lines[i].strip()
            indent = _indent(line)
            if stripped and (
                indent < header_indent
                or (indent == header_indent and not numpy)
                or (i + 1 < len(lines) and _NUMPY_HEADER.fullmatch(lines[i + 1].strip()))
            ):
                break  # the next section
            i += 1
            if not stripped:
                continue
            entry = _ENTRY.fullmatch(stripped)
            if entry and (entry_indent is None or indent <= entry_indent):
                entry_indent, current = indent, entry.group(1)
                # In NumPy style the text after the colon is the type, not a description.
                args[current] = "" if numpy else (entry.group(2) or "")
            elif current is not None:  # the description goes on
                args[current] = f"{args[current]} {stripped}".strip()
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text or None, {k: v for k, v in args.items() if v}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


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


def _walk(tp: Any, seen: set[int]) -> Iterator[Any]:
    """*tp*, the types and ``Annotated`` metadata nested in it, and the fields of the classes it uses."""
    yield tp
    for arg in get_args(tp):
        yield from _walk(arg, seen)
    cls = tp if isinstance(tp, type) else get_origin(tp)
    if (
        isinstance(cls, type)
        and id(cls) not in seen  # recursive types
        and (dataclasses.is_dataclass(cls) or typing.is_typeddict(cls) or issubclass(cls, msgspec.Struct))
    ):
        seen.add(id(cls))
        for hint in get_type_hints(cls, include_extras=True).values():
            yield from _walk(hint, seen)


def _is_pydantic(item: Any) -> bool:
    """A pydantic class (model, dataclass, special type) or marker (``FieldInfo``, validators)."""
    if isinstance(item, type):
        return hasattr(item, "__pydantic_fields__") or any(
            c.__module__.startswith("pydantic") for c in item.__mro__
        )
    return type(item).__module__.startswith("pydantic")


def _involves_pydantic(tp: Any) -> bool:
    return any(_is_pydantic(item) for item in _walk(tp, set()))


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


def _output(
    annotation: Any, builder: _MsgspecBuilder | _PydanticBuilder
) -> tuple[dict[str, Any] | None, bool, Callable[[Any], Any]]:
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
        return None, False, _to_json
    try:
        schema, serialize = builder.value(annotation)
    except Exception:  # a type that cannot be described makes unstructured output, as in the SDK
        return None, False, _to_json
    rooted = _rooted(schema)
    if rooted.get("type") == "object":
        return rooted, False, serialize
    wrapped = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    if "$defs" in schema:
        wrapped["$defs"] = schema.pop("$defs")
    return wrapped, True, serialize


def _rooted(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema whose root is ``{"$ref": ...}`` with the referenced definition moved to the root.

    MCP wants ``"type": "object"`` at the root. The definition stays in ``$defs`` if it is used
    elsewhere (a recursive type).
    """
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(_DEFS):
        return schema
    defs = dict(schema["$defs"])
    name = ref.removeprefix(_DEFS)
    root = {**defs[name], **{k: v for k, v in schema.items() if k not in ("$ref", "$defs")}}
    if msgspec.json.encode(ref) not in msgspec.json.encode(defs):
        del defs[name]
    if defs:
        root["$defs"] = defs
    return root


def _rebuild(tp: Any, convert: Callable[[Any], Any]) -> Any:
    """*tp* with *convert* applied to the types inside it (``list[X]``, ``X | Y``, ``Annotated[X, ...]``)."""
    origin, args = get_origin(tp), get_args(tp)
    if not args or origin is Literal:
        return tp
    if origin is Annotated:
        inner = convert(args[0])
        return tp if inner is args[0] else Annotated[(inner, *tp.__metadata__)]
    converted = tuple(a if a is Ellipsis else convert(a) for a in args)
    if all(a is b for a, b in zip(converted, args, strict=True)):
        return tp
    if origin in (Union, types.UnionType):
        return Union[converted]  # noqa: UP007 - a runtime union of computed members
    return origin[converted]


# -- msgspec ---------------------------------------------------------------------------------------


def _to_msgspec(tp: Any) -> Any:
    """Rewrite ``Annotated`` metadata that msgspec does not read into ``msgspec.Meta``, recursively.

    Only the annotation itself is rewritten: the fields of a user's dataclass take msgspec.Meta only.
    """
    if get_origin(tp) is not Annotated:
        return _rebuild(tp, _to_msgspec)
    keywords: dict[str, Any] = {}
    kept: list[Any] = []
    for meta in tp.__metadata__:
        if isinstance(meta, msgspec.Meta):
            kept.append(meta)
        elif isinstance(meta, str):
            keywords["description"] = meta
        elif type(meta).__name__ in ("Doc", "DocInfo"):  # typing_extensions.Doc, annotated_types.doc()
            keywords["description"] = meta.documentation
        elif type(meta).__module__ == "annotated_types":
            fields = {f.name: getattr(meta, f.name) for f in dataclasses.fields(meta)}
            if not fields.keys() <= _META_KEYWORDS:
                # Dropping a constraint would let invalid values through without a word.
                raise TypeError(f"{meta!r} cannot be checked without pydantic")
            keywords.update((k, v) for k, v in fields.items() if v is not None)
    if keywords:
        kept.append(msgspec.Meta(**keywords))
    inner = _to_msgspec(get_args(tp)[0])
    return Annotated[(inner, *kept)] if kept else inner


def _to_json(value: Any) -> Any:
    """*value* as JSON's builtins only (to_builtins alone would keep tuples and non-string keys)."""
    return msgspec.json.decode(msgspec.json.encode(value))


def _jsonable(value: Any) -> bool:
    try:
        msgspec.to_builtins(value)
    except TypeError:
        return False
    return True


def _msgspec_error(exc: msgspec.ValidationError) -> ArgumentError:
    text = str(exc)
    if missing := re.fullmatch(r"Object missing required field `(\w+)`", text):
        return ArgumentError(f"Missing required argument '{missing.group(1)}'")
    if at := re.search(r" - at `\$\.(\w+)", text):
        return ArgumentError(f"Invalid arguments for '{at.group(1)}': {text}")
    return ArgumentError(f"Invalid arguments: {text}")


class _MsgspecBuilder:
    def __init__(self, strict: bool) -> None:
        self.strict = strict

    def arguments(self, params: list[tuple[str, Any, Any]]) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        schema_defaults: dict[str, Any] = {}
        for name, annotation, default in params:
            tp = _to_msgspec(annotation)
            if default is inspect.Parameter.empty:
                fields.append((name, tp))
            elif not _jsonable(default):  # fine as a default, but not in a schema
                fields.append((name, tp, msgspec.field(default_factory=_constant(default))))
            elif isinstance(default, (list, dict, set, bytearray)) and default:
                # msgspec refuses these, rightly: a mutable default must not be shared between calls.
                fields.append(
                    (name, tp, msgspec.field(default_factory=functools.partial(copy.deepcopy, default)))
                )
                schema_defaults[name] = msgspec.to_builtins(default)
            else:
                fields.append((name, tp, default))
        struct = msgspec.defstruct(_ARGS_NAME, fields, kw_only=True)
        schemas, components = msgspec.json.schema_components([struct], ref_template=_DEFS + "{name}")
        schema = _rooted({**schemas[0], "$defs": components})
        schema.pop("title", None)
        if not schema.get("required"):
            schema.pop("required", None)
        for name, value in schema_defaults.items():
            schema["properties"][name]["default"] = value

        convert, asdict, error, strict = (
            msgspec.convert,
            msgspec.structs.asdict,
            msgspec.ValidationError,
            self.strict,
        )

        def bind(arguments: Any) -> dict[str, Any]:
            try:
                return asdict(convert(arguments, struct, strict=strict))
            except error as exc:
                raise _msgspec_error(exc) from None

        return schema, bind

    def value(self, annotation: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        schemas, components = msgspec.json.schema_components(
            [_to_msgspec(annotation)], ref_template=_DEFS + "{name}"
        )
        schema = dict(schemas[0])
        if components:
            schema["$defs"] = dict(components)
        return schema, _to_json


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


# -- pydantic --------------------------------------------------------------------------------------


@functools.cache
def _schema_generator() -> type[pydantic.json_schema.GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class Generator(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False  # "title": "City" for a field named city says nothing; a user's title stays

        def emit_warning(self, kind: Any, detail: str) -> None:
            if kind != "non-serializable-default":  # such a default is left out, which is right
                super().emit_warning(kind, detail)

    return Generator


# Below 3.12 pydantic only reads typing_extensions.TypedDict; rebuilt classes are kept so that a
# TypedDict used twice stays one definition.
_TYPEDDICTS: dict[Any, Any] = {}


def _for_pydantic(tp: Any) -> Any:
    """*tp* with any stdlib ``TypedDict`` in it rebuilt as a ``typing_extensions`` one (Python < 3.12)."""
    if sys.version_info >= (3, 12):
        return tp
    if not (typing.is_typeddict(tp) and type(tp).__module__ == "typing"):
        return _rebuild(tp, _for_pydantic)
    if tp in _TYPEDDICTS:
        return _TYPEDDICTS[tp]
    import typing_extensions

    _TYPEDDICTS[tp] = tp  # a recursive TypedDict refers to itself as it is (and pydantic says so)
    items: dict[str, Any] = {}
    for key, hint in get_type_hints(tp, include_extras=True).items():
        if get_origin(hint) in (typing.Required, typing.NotRequired):
            hint = get_args(hint)[0]
        hint = _for_pydantic(hint)
        items[key] = hint if key in tp.__required_keys__ else typing_extensions.NotRequired[hint]
    make: Any = typing_extensions.TypedDict  # the functional form, with computed arguments
    rebuilt = make(tp.__name__, items)
    rebuilt.__doc__, rebuilt.__module__, rebuilt.__qualname__ = tp.__doc__, tp.__module__, tp.__qualname__
    _TYPEDDICTS[tp] = rebuilt
    return rebuilt


def _pydantic_error(exc: pydantic.ValidationError) -> ArgumentError:
    problems = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        if not loc:
            problems.append(f"Invalid arguments: {error['msg']}")
        elif error["type"] == "missing" and len(loc) == 1:
            problems.append(f"Missing required argument '{loc[0]}'")
        else:
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
            problems.append(f"Invalid arguments for '{loc[0]}': {error['msg']} - at `{path}`")
    return ArgumentError("; ".join(problems))


class _PydanticBuilder:
    def __init__(self, strict: bool) -> None:
        import pydantic  # only servers whose tools use pydantic types pay for this import

        self.pydantic = pydantic
        self.strict = strict

    def arguments(self, params: list[tuple[str, Any, Any]]) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        pydantic = self.pydantic
        definitions: dict[str, Any] = {}
        for i, (name, annotation, default) in enumerate(params):
            tp, metadata = _for_pydantic(annotation), []
            if get_origin(tp) is Annotated:
                metadata = [
                    pydantic.Field(description=m) if isinstance(m, str) else m for m in tp.__metadata__
                ]
                tp = get_args(tp)[0]
            # Fields are named p0, p1... with the parameter's name as alias, so that no parameter
            # name can clash with BaseModel's attributes or count as private (a leading underscore).
            field = Annotated[(tp, *metadata, pydantic.Field(alias=name))]  # type: ignore[valid-type]
            definitions[f"p{i}"] = (field, ... if default is inspect.Parameter.empty else default)
        try:
            model = pydantic.create_model(_ARGS_NAME, **definitions)
            schema = model.model_json_schema(schema_generator=_schema_generator())
        except pydantic.PydanticUserError as exc:
            raise TypeError(str(exc)) from exc
        schema.pop("title", None)
        schema.setdefault("properties", {})
        names = [(f"p{i}", name) for i, (name, _, _) in enumerate(params)]
        error = pydantic.ValidationError

        def result(instance: Any) -> dict[str, Any]:
            return {name: getattr(instance, field) for field, name in names}

        if self.strict:
            # pydantic's strict mode on JSON input is JSON's rules: ISO strings for dates, no "1" for 1.
            encode, validate_json = msgspec.json.encode, model.model_validate_json

            def bind(arguments: Any) -> dict[str, Any]:
                try:
                    return result(validate_json(encode(arguments), strict=True))
                except error as exc:
                    raise _pydantic_error(exc) from None
                except TypeError as exc:  # not JSON data: cannot come from the wire
                    raise ArgumentError(f"Invalid arguments: {exc}") from None

            return schema, bind

        validate = model.model_validate

        def bind_lax(arguments: Any) -> dict[str, Any]:
            try:
                return result(validate(arguments))
            except error as exc:
                raise _pydantic_error(exc) from None

        return schema, bind_lax

    def value(self, annotation: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        adapter = self.pydantic.TypeAdapter(_for_pydantic(annotation))
        schema = adapter.json_schema(mode="serialization", schema_generator=_schema_generator())
        return schema, functools.partial(adapter.dump_python, mode="json")
