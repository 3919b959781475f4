"""YAML for the frontmatter of a ``SKILL.md``, read with PyYAML as JSON would hold it.

The Skills extension sends a skill's frontmatter "rendered verbatim as a JSON object", and a client
compares that object field by field with the frontmatter of the file it reads, so both ends must
read YAML alike, and alike with other implementations (which read YAML 1.2). PyYAML reads YAML 1.1,
so the loader here swaps the 1.1 rules that disagree with 1.2's core schema and with JSON for the
1.2 ones: ``yes``/``no``/``on``/``off`` stay strings (only ``true``/``false`` are booleans),
``012`` is twelve (not octal ten), ``1:30`` is a string (not sexagesimal ninety), ``1e3`` is a
number, and dates stay strings instead of becoming ``datetime`` objects that JSON cannot carry.

PyYAML is imported on first use, so that ``import mcpkit`` (and every stdio server's start) does not
pay for it: only a server that mounts skills, or a client that loads one, reads YAML.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["load"]

# The YAML 1.2 core schema's plain scalars (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_INT_TAG = "tag:yaml.org,2002:int"
_REPLACED = {"tag:yaml.org,2002:bool", _INT_TAG, "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp"}


def _int(loader: Any, node: Any) -> int:
    text: str = loader.construct_scalar(node)
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text, 10)


@functools.cache
def _loader() -> type[Any]:
    import yaml

    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when it is there

    class Loader(base):  # type: ignore[misc]
        pass

    # The resolvers are a class-level dict of first character -> [(tag, regexp)], tried in order:
    # copy it without the 1.1 rules, then add the 1.2 ones (integers before floats).
    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
    Loader.add_implicit_resolver(_INT_TAG, _INT, list("-+0123456789"))
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
    Loader.add_constructor(_INT_TAG, _int)
    return Loader


def load(text: str) -> Any:
    """The one YAML document in *text*, as plain JSON values.

    Raises:
        ValueError: *text* is not valid YAML (the parser's message says where).
    """
    import yaml

    try:
        return yaml.load(text, Loader=_loader())  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        # The usual slip in frontmatter is a description such as "Use when: asked", unquoted.
        hint = "; a value holding ': ' must be quoted" if "mapping values are not allowed" in str(exc) else ""
        raise ValueError(f"invalid YAML: {exc}{hint}") from None
