"""RFC 6570 URI templates, turned around: given a URI, which values produced it?

Resource templates (``notes://{id}``, ``file:///{+path}``, ``search://items{?q,limit}``) are matched
against the URI of a ``resources/read`` request to find the handler and its arguments. Matching is
the inverse of expansion, so each operator becomes a regular expression for what its expansion can
produce:

=========  =========================  ==============================================
operator   example                    matches
=========  =========================  ==============================================
(none)     ``{id}``                   one segment: no ``/ ? #``, percent-decoded
``+``      ``{+path}``                anything up to ``?`` or ``#`` (reserved chars kept)
``#``      ``{#frag}``                ``#`` then the rest
``.``      ``{.ext}``                 ``.`` then a label
``/``      ``{/seg}``/``{/seg*}``     ``/`` then a segment (``*``: several, as a list)
``;``      ``{;p}``                   ``;p=value``
``?`` ``&``  ``{?q,limit}``           query parameters, each optional, in any order
=========  =========================  ==============================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["UriTemplate"]

_EXPRESSION: Final = re.compile(r"\{([+#./;?&]?)([^}]+)\}")
_VARNAME: Final = re.compile(r"^[A-Za-z0-9_.%]+(\*|:\d+)?$")


@dataclass(frozen=True, slots=True)
class _Var:
    name: str
    explode: bool


class UriTemplate:
    """A compiled URI template. ``match(uri)`` returns the variables, or ``None``."""

    def __init__(self, template: str) -> None:
        self.template = template
        self.variables: list[str] = []
        pattern: list[str] = []
        self._query: list[_Var] = []
        position = 0
        for found in _EXPRESSION.finditer(template):
            pattern.append(re.escape(template[position : found.start()]))
            position = found.end()
            operator, body = found.groups()
            names = [self._var(spec) for spec in body.split(",")]
            if operator in ("?", "&"):
                if template[position:].strip():
                    raise ValueError(f"{template!r}: a query expression must come last")
                self._query.extend(names)
                continue
            pattern.append(self._regex(operator, names))
        pattern.append(re.escape(template[position:]))
        if "{" in template[position:] or "}" in template[position:]:
            raise ValueError(f"{template!r}: unbalanced braces")
        tail = r"(?:\?(?P<__query>[^#]*))?" if self._query else ""
        self._regex_compiled = re.compile("".join(pattern) + tail + r"\Z")

    @property
    def is_template(self) -> bool:
        """Whether there is anything to fill in (otherwise it is a plain URI)."""
        return bool(self.variables)

    def _var(self, spec: str) -> _Var:
        if not _VARNAME.match(spec):
            raise ValueError(f"{self.template!r}: invalid variable {spec!r}")
        explode = spec.endswith("*")
        name = spec.rstrip("*").split(":")[0]
        if name in self.variables:
            raise ValueError(f"{self.template!r}: variable {name!r} appears twice")
        self.variables.append(name)
        return _Var(name, explode)

    @staticmethod
    def _regex(operator: str, names: list[_Var]) -> str:
        parts: list[str] = []
        for index, var in enumerate(names):
            group = f"(?P<{_group(var.name)}>"
            if operator == "":
                parts.append(("," if index else "") + group + r"[^/?#,]*?)")
            elif operator == "+":
                parts.append(("," if index else "") + group + r"[^?#]*?)")
            elif operator == "#":
                parts.append(("#" if index == 0 else ",") + group + r".*?)")
            elif operator == ".":
                parts.append(r"(?:\." + group + r"[^/?#.]*))?")
            elif operator == "/":
                body = r"[^?#]*" if var.explode else r"[^/?#]*"
                parts.append(r"(?:/" + group + body + r"))?")
            elif operator == ";":
                parts.append(r"(?:;" + re.escape(var.name) + r"(?:=" + group + r"[^;/?#]*))?)?")
        return "".join(parts)

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The variables' values if *uri* is an expansion of this template, else ``None``."""
        found = self._regex_compiled.match(uri)
        if found is None:
            return None
        # urllib.parse (which imports ipaddress) is imported on the first match, not with the module:
        # every server registering a resource imports this module at start-up.
        from urllib.parse import parse_qsl, unquote

        values: dict[str, str | list[str]] = {}
        groups = found.groupdict()
        for name in self.variables:
            raw = groups.get(_group(name))
            if raw is None:
                continue
            if any(v.name == name and v.explode for v in self._query):
                continue
            values[name] = [unquote(p) for p in raw.split("/")] if self._exploded(name) else unquote(raw)
        query = groups.get("__query")
        if query is not None:
            wanted = {v.name for v in self._query}
            for key, value in parse_qsl(query, keep_blank_values=True):
                if key in wanted:
                    values[key] = value
        return values

    def _exploded(self, name: str) -> bool:
        return f"{{/{name}*}}" in self.template

    def expand(self, values: dict[str, str]) -> str:
        """Fill in *values* (simple and reserved expansion only): the inverse of :meth:`match`."""
        from urllib.parse import quote  # on first use, as in match()

        def replace(found: re.Match[str]) -> str:
            operator, body = found.groups()
            names = [spec.rstrip("*").split(":")[0] for spec in body.split(",")]
            present = [(n, values[n]) for n in names if n in values]
            if operator in ("?", "&"):
                joined = "&".join(f"{n}={quote(v, safe='')}" for n, v in present)
                return (operator + joined) if present else ""
            safe = ":/?#[]@!$&'()*+,;=" if operator in ("+", "#") else ""
            prefix = {"#": "#", ".": ".", "/": "/", ";": ";"}.get(operator, "")
            return prefix + ",".join(quote(v, safe=safe) for _, v in present)

        return _EXPRESSION.sub(replace, self.template)


def _group(name: str) -> str:
    # Regex group names must be identifiers; variable names may hold dots and percent signs.
    return "v_" + "".join(c if c.isalnum() else f"_{ord(c):x}_" for c in name)
