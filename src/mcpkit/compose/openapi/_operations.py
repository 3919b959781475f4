"""OpenAPI operations as tool definitions: a name, a description, and an ``inputSchema``.

Each operation's arguments are its parameters (path, query, header and cookie, the path item's
merged with the operation's own) and its request body:

* a JSON (or form) body whose schema is an object with ``properties`` is *flattened*: each property
  is an argument of its own (``readOnly`` ones, which the API sets, are left out); any other body
  (an array, a free-form object, a ``text/plain`` string) is one argument, ``body``;
* names are kept where they are unique. Two parameters of one name in different places (``id`` in
  the path and in the query) keep it for the first in the order path, query, header, cookie; the
  next is ``id_query`` (``_header``, ``_cookie``). A body property named like a parameter becomes
  ``<name>_body``. A further clash adds underscores. The API always gets its own names back.

The header parameters ``Accept``, ``Content-Type`` and ``Authorization`` are ignored, as OpenAPI
says ("the parameter definition SHALL be ignored"): credentials are configuration, never arguments.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = ["Argument", "Operation", "fallback_name", "operations", "tool_name"]

METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_LOCATIONS: Final = ("path", "query", "header", "cookie")
_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})
_NOT_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_NAME: Final = 128

Location = Literal["path", "query", "header", "cookie", "body"]


@dataclass(frozen=True)
class Argument:
    """One argument of a tool and where its value goes in the request."""

    name: str  # the tool argument's name
    location: Location
    api_name: str  # the parameter's (or body property's) own name; "" for a whole body
    required: bool
    schema: dict[str, Any]
    style: str = "form"
    explode: bool = True


@dataclass
class Operation:
    """One operation of the document, ready to become a tool, resource or template."""

    method: str  # upper case
    path: str
    name: str
    summary: str | None
    description: str | None
    tags: list[str]
    arguments: list[Argument] = field(default_factory=list)
    body_type: str | None = None  # the request body's media type, when there is one
    body_whole: bool = False  # the body is the one argument "body" (not flattened)
    response_type: str | None = None  # the first media type of the first 2xx response

    @property
    def text(self) -> str | None:
        """The tool's description: the summary, then the description when it says more."""
        parts = [p.strip() for p in (self.summary, self.description) if p and p.strip()]
        if len(parts) == 2 and parts[1].startswith(parts[0]):
            parts = parts[1:]
        return "\n\n".join(parts) or None

    def input_schema(self) -> dict[str, Any]:
        properties = {a.name: a.schema for a in self.arguments}
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = [a.name for a in self.arguments if a.required]
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema


def tool_name(operation_id: str) -> str:
    """An ``operationId`` made a valid tool name: other characters become ``_``, at most 128."""
    name = _NOT_NAME_CHARS.sub("_", operation_id).strip("_") or "operation"
    return name if len(name) <= _MAX_NAME else _shorten(name, operation_id)


def fallback_name(method: str, path: str) -> str:
    """The tool name of an operation without ``operationId``: the method and the path's words.

    Stable (the same operation gets the same name on every run and machine) and always a valid tool
    name (1 to 128 of ``A-Z a-z 0-9 _ - .``)::

        >>> fallback_name("get", "/pets/{petId}/photos")
        'get_pets_petId_photos'
        >>> fallback_name("POST", "/")
        'post_root'
    """
    words = [w for w in _NOT_NAME_CHARS.split(path.replace("{", " ").replace("}", " ")) if w.strip("_.-")]
    slug = "_".join(w.strip("_.-") for w in words) or "root"
    method = _NOT_NAME_CHARS.sub("_", method.lower()).strip("_") or "op"
    name = f"{method}_{slug}"
    return name if len(name) <= _MAX_NAME else _shorten(name, f"{method.upper()} {path}")


def _shorten(name: str, seed: str) -> str:
    # Cut to fit, and keep names of different operations apart with a hash of what they were made from.
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{name[: _MAX_NAME - 11]}_{digest}"


def operations(paths: dict[str, Any], version: str) -> Iterator[Operation]:
    """The operations of resolved *paths*, in document order. Raises ``ValueError`` on a malformed one."""
    for path, item in paths.items():
        if not isinstance(item, dict):
            raise ValueError(f"paths.{path} must be an object")
        shared = item.get("parameters") or []
        for method, raw in item.items():
            if method not in METHODS:
                continue  # parameters, summary, servers, x-extensions
            if not isinstance(raw, dict):
                raise ValueError(f"paths.{path}.{method} must be an object")
            yield _operation(method.upper(), path, raw, shared, version)


def _operation(method: str, path: str, raw: dict[str, Any], shared: list[Any], version: str) -> Operation:
    where = f"{method} {path}"
    operation_id = raw.get("operationId")
    op = Operation(
        method=method,
        path=path,
        name=tool_name(str(operation_id)) if operation_id else fallback_name(method, path),
        summary=raw.get("summary"),
        description=raw.get("description"),
        tags=[str(t) for t in raw.get("tags") or []],
        response_type=_response_type(raw.get("responses")),
    )
    taken: set[str] = set()
    for param in sorted(_parameters(shared, raw.get("parameters") or [], where), key=_by_location):
        location, api_name = param["in"], param["name"]
        if location == "header" and api_name.lower() in _IGNORED_HEADERS:
            continue
        name = _unique(api_name, f"_{location}", taken)
        schema = _param_schema(param, version)
        style = param.get("style", "simple" if location in ("path", "header") else "form")
        explode = bool(param.get("explode", style == "form"))
        required = location == "path" or bool(param.get("required"))
        op.arguments.append(Argument(name, location, api_name, required, schema, style, explode))
    body = raw.get("requestBody")
    if isinstance(body, dict):
        _add_body(op, body, taken, version)
    return op


def _by_location(param: dict[str, Any]) -> int:
    return _LOCATIONS.index(param["in"])


def _parameters(shared: list[Any], own: list[Any], where: str) -> list[dict[str, Any]]:
    # "A unique parameter is defined by a combination of a name and location"; the operation's
    # own definition overrides the path item's.
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for param in (*shared, *own):
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise ValueError(f"{where}: a parameter without a name: {param!r}")
        if param.get("in") not in _LOCATIONS:
            raise ValueError(f"{where}: parameter {param['name']!r} has 'in' {param.get('in')!r}")
        merged[(param["name"], param["in"])] = param
    return list(merged.values())


def _unique(name: str, suffix: str, taken: set[str]) -> str:
    if name in taken:
        name += suffix
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _param_schema(param: dict[str, Any], version: str) -> dict[str, Any]:
    schema = param.get("schema")
    if schema is None and isinstance(param.get("content"), dict) and param["content"]:
        schema = next(iter(param["content"].values())).get("schema")
    schema = to_json_schema(schema if isinstance(schema, dict) else {}, version)
    if param.get("description") and "description" not in schema:
        schema = {**schema, "description": param["description"]}
    return schema


def _add_body(op: Operation, body: dict[str, Any], taken: set[str], version: str) -> None:
    content = body.get("content")
    if not isinstance(content, dict) or not content:
        return
    media = _pick_media(content)
    op.body_type = media
    schema = to_json_schema((content[media] or {}).get("schema") or {}, version)
    required = bool(body.get("required"))
    flat = _properties(schema) if media == "application/x-www-form-urlencoded" or _is_json(media) else None
    if flat is None:
        op.body_whole = True
        if not _is_json(media) and media != "application/x-www-form-urlencoded" and not schema:
            schema = {"type": "string"}
        if body.get("description") and "description" not in schema:
            schema = {**schema, "description": body["description"]}
        op.arguments.append(Argument(_unique("body", "_", taken), "body", "", required, schema))
        return
    properties, needed = flat
    for api_name, prop in properties.items():
        if isinstance(prop, dict) and prop.get("readOnly") is True:
            continue
        name = _unique(api_name, "_body", taken)
        op.arguments.append(Argument(name, "body", api_name, required and api_name in needed, prop))


def _pick_media(content: dict[str, Any]) -> str:
    for media in content:
        if _is_json(media):
            return media
    return (
        "application/x-www-form-urlencoded"
        if "application/x-www-form-urlencoded" in content
        else next(iter(content))
    )


def _is_json(media: str | None) -> bool:
    if media is None:
        return False
    base = media.split(";")[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


def _properties(schema: dict[str, Any]) -> tuple[dict[str, Any], set[str]] | None:
    """The properties and required names of an object schema (``allOf`` parts merged), or ``None``
    when the body is not an object with named properties."""
    parts = [schema, *(schema.get("allOf") or [])]
    if any(not isinstance(p, dict) or "oneOf" in p or "anyOf" in p for p in parts):
        return None
    properties: dict[str, Any] = {}
    needed: set[str] = set()
    for part in parts:
        properties.update(part.get("properties") or {})
        needed.update(part.get("required") or [])
    return (properties, needed) if properties else None


def _response_type(responses: Any) -> str | None:
    if not isinstance(responses, dict):
        return None
    for status, response in responses.items():
        if str(status).startswith("2") and isinstance(response, dict) and response.get("content"):
            return str(next(iter(response["content"])))
    return None


def to_json_schema(schema: dict[str, Any], version: str) -> dict[str, Any]:
    """An OpenAPI schema as JSON Schema 2020-12 (what ``inputSchema`` holds).

    OpenAPI 3.1 schemas are JSON Schema already. A 3.0 schema's ``nullable: true`` becomes ``null``
    among its types, and its boolean ``exclusiveMinimum``/``exclusiveMaximum`` become the numbers.
    """
    if version != "3.0":
        return schema
    converted: dict[str, Any] = _from_30(schema)
    return converted


_SUBSCHEMAS: Final = ("items", "not", "additionalProperties")
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems")


def _from_30(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if out.pop("nullable", False) is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif "enum" not in out:
            return {"anyOf": [_from_30(out), {"type": "null"}]}
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        # 3.0: a boolean saying whether the bound is exclusive; 2020-12: the exclusive bound itself.
        if isinstance(out.get(exclusive), bool) and out.pop(exclusive) and bound in out:
            out[exclusive] = out.pop(bound)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _from_30(v) for k, v in out["properties"].items()}
    for key in _SUBSCHEMAS:
        if isinstance(out.get(key), dict):
            out[key] = _from_30(out[key])
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_from_30(s) for s in out[key]]
    return out
