"""The pydantic schema engine of :mod:`mcpkit._signature`, for functions whose types involve pydantic.

pydantic itself is imported only when a :class:`PydanticBuilder` is made (and this module only
when such a function is inspected), so most servers never pay for it.
"""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import msgspec

from ._signature_types import ARGS_NAME, ArgumentError, rebuild

if typing.TYPE_CHECKING:
    import pydantic
    import pydantic.json_schema

__all__ = ["PydanticBuilder"]


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
        return rebuild(tp, _for_pydantic)
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


class PydanticBuilder:
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
            model = pydantic.create_model(ARGS_NAME, **definitions)
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
