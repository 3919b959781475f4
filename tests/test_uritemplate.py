"""RFC 6570 matching: the inverse of expansion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit._uritemplate import UriTemplate

segment = st.text(
    alphabet=st.characters(blacklist_characters="/?#,", blacklist_categories=("Cs",)), min_size=1, max_size=12
)
path = st.lists(segment, min_size=1, max_size=4).map("/".join)


@given(segment, segment)
def test_simple_expansion_round_trips(owner: str, name: str) -> None:
    template = UriTemplate("repo://{owner}/{name}")
    assert template.match(template.expand({"owner": owner, "name": name})) == {"owner": owner, "name": name}


@given(path)
def test_reserved_expansion_keeps_slashes(value: str) -> None:
    template = UriTemplate("file:///{+path}")
    assert template.match(template.expand({"path": value})) == {"path": value}


@given(st.dictionaries(st.sampled_from(["q", "limit"]), st.text(max_size=10)))
def test_query_parameters_are_optional_and_unordered(values: dict[str, str]) -> None:
    template = UriTemplate("search://items{?q,limit}")
    assert template.match(template.expand(values)) == values


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("notes://{id}", "notes://42", {"id": "42"}),
        ("notes://{id}", "notes://4/2", None),
        ("notes://{id}", "other://42", None),
        ("notes://{a}/{b}", "notes://x/y", {"a": "x", "b": "y"}),
        ("repo://{owner}{/path*}", "repo://me/a/b", {"owner": "me", "path": ["a", "b"]}),
        ("x://{name}{.ext}", "x://readme.md", {"name": "readme", "ext": "md"}),
        ("x://item{;v}", "x://item;v=3", {"v": "3"}),
        ("docs://{#section}", "docs://#intro", {"section": "intro"}),
        ("plain://uri", "plain://uri", {}),
        ("plain://uri", "plain://uri2", None),
    ],
)
def test_matching(template: str, uri: str, expected: object) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize("bad", ["x://{a", "x://{a}{a}", "x://{a b}", "x://{?q}/more"])
def test_malformed_templates_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        UriTemplate(bad)
