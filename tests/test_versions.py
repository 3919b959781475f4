"""The revision registry and the feature table."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcpkit._versions import (
    FEATURES,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    Era,
    era_of,
    features_table,
    has,
    negotiate_handshake_version,
)

from .conftest import ROOT, SPEC, requires_spec


@requires_spec
def test_every_revision_in_the_spec_is_supported() -> None:
    on_disk = sorted(p.name for p in SPEC.iterdir() if (p / "schema.json").is_file())
    assert on_disk == sorted(SUPPORTED_VERSIONS)
    assert list(SUPPORTED_VERSIONS) == sorted(SUPPORTED_VERSIONS, reverse=True)


def test_eras() -> None:
    assert {era_of(v) for v in HANDSHAKE_VERSIONS} == {Era.HANDSHAKE}
    assert {era_of(v) for v in STATELESS_VERSIONS} == {Era.STATELESS}
    assert era_of("1900-01-01") is None


@given(st.sampled_from(HANDSHAKE_VERSIONS))
def test_a_supported_handshake_version_is_echoed(version: str) -> None:
    assert negotiate_handshake_version(version) == version


@given(st.one_of(st.text(), st.integers(), st.none(), st.sampled_from(STATELESS_VERSIONS)))
def test_anything_else_gets_our_latest_handshake_version(requested: object) -> None:
    if requested not in HANDSHAKE_VERSIONS:
        assert negotiate_handshake_version(requested) == LATEST_HANDSHAKE_VERSION


def _schema(version: str) -> dict[str, Any]:
    return json.loads((SPEC / version / "schema.json").read_text())  # type: ignore[no-any-return]


def _schema_defs(version: str) -> set[str]:
    schema = _schema(version)
    return set(schema.get("$defs") or schema.get("definitions") or {})


@requires_spec
def test_feature_table_agrees_with_the_schemas() -> None:
    # Each feature that names a schema type or method must exist exactly in the revisions the table says.
    probes = {
        "audio_content": lambda v: "AudioContent" in _schema_defs(v),
        "resource_link": lambda v: "ResourceLink" in _schema_defs(v),
        "tool_annotations": lambda v: "ToolAnnotations" in _schema_defs(v),
        "icons": lambda v: "Icon" in _schema_defs(v),
        "server_discover": lambda v: "DiscoverRequest" in _schema_defs(v),
        "initialize": lambda v: "InitializeRequest" in _schema_defs(v),
        "ping": lambda v: "PingRequest" in _schema_defs(v),
        "logging_set_level": lambda v: "SetLevelRequest" in _schema_defs(v),
        "resource_subscribe": lambda v: "SubscribeRequest" in _schema_defs(v),
        "completions": lambda v: "CompleteRequest" in _schema_defs(v),
        "elicitation": lambda v: "ElicitRequest" in _schema_defs(v),
        "input_required": lambda v: "InputRequiredResult" in _schema_defs(v),
        "subscriptions_listen": lambda v: "SubscriptionsListenRequest" in _schema_defs(v),
        "batch": lambda v: "JSONRPCBatchRequest" in _schema_defs(v),
        "tasks": lambda v: "GetTaskRequest" in _schema_defs(v),
        "elicitation_url": lambda v: "ElicitRequestURLParams" in _schema_defs(v),
        "sampling_tools": lambda v: "ToolChoice" in _schema_defs(v),
        "structured_content": lambda v: (
            "outputSchema"
            in json.dumps(_schema(v)["$defs" if "$defs" in _schema(v) else "definitions"]["Tool"])
        ),
    }
    transports = {v: _transport_text(v) for v in SUPPORTED_VERSIONS}
    probes["resumable_streams"] = lambda v: "Last-Event-ID" in transports[v]
    probes["sse_polling"] = lambda v: "prime the client to reconnect" in transports[v]
    for feature, probe in probes.items():
        assert feature in FEATURES
        for version in SUPPORTED_VERSIONS:
            assert has(version, feature) == probe(version), (feature, version)


def _transport_text(version: str) -> str:
    """The revision's transport chapter; 2026-07-28 has Streamable HTTP without sessions or replay."""
    path = SPEC / version / "docs" / "basic" / "transports.mdx"
    return path.read_text() if path.exists() else ""


def test_the_docs_table_is_the_feature_table() -> None:
    assert features_table() in (ROOT / "docs" / "features.md").read_text()
