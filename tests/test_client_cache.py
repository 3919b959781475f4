"""The client's ttlMs cache (``mcpkit.client.cache``), with a hand-driven clock."""

from __future__ import annotations

from typing import Any

from mcpkit.client.cache import ResultCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_result_is_fresh_for_its_ttl_and_no_longer() -> None:
    clock = Clock()
    cache = ResultCache(clock)
    key = ResultCache.key("tools/list", {"_meta": {"x": 1}})
    assert key is not None
    cache.remember(key, {"tools": [], "ttlMs": 1500})
    assert cache.get(key) == {"tools": [], "ttlMs": 1500}
    clock.now += 1.499
    assert cache.get(key) is not None
    clock.now += 0.001
    assert cache.get(key) is None


def test_only_cacheable_methods_with_a_positive_integer_ttl_are_kept() -> None:
    cache = ResultCache(Clock())
    assert ResultCache.key("tools/call", {"name": "x"}) is None
    key = ResultCache.key("prompts/list", {})
    assert key is not None
    for ttl in (0, -5, 1.5, True, "100", None):
        cache.remember(key, {"prompts": [], "ttlMs": ttl})
        assert cache.get(key) is None, ttl


def test_the_key_ignores_meta_and_the_retry_fields_but_not_the_params() -> None:
    plain = ResultCache.key("resources/read", {"uri": "a://1"})
    assert plain == ResultCache.key(
        "resources/read", {"uri": "a://1", "_meta": {"k": 1}, "requestState": "s", "inputResponses": {}}
    )
    assert plain != ResultCache.key("resources/read", {"uri": "a://2"})


def test_results_are_copied_in_and_out() -> None:
    cache = ResultCache(Clock())
    key = ResultCache.key("tools/list", {})
    assert key is not None
    result: dict[str, Any] = {"tools": [{"name": "a"}], "ttlMs": 1000}
    cache.remember(key, result)
    result["tools"].append({"name": "b"})
    taken = cache.get(key)
    taken["tools"].clear()
    assert cache.get(key) == {"tools": [{"name": "a"}], "ttlMs": 1000}


def test_change_notifications_forget_what_they_make_stale() -> None:
    cache = ResultCache(Clock())
    keys = {
        name: ResultCache.key(method, params)
        for name, method, params in [
            ("tools", "tools/list", {}),
            ("resources", "resources/list", {}),
            ("templates", "resources/templates/list", {}),
            ("one", "resources/read", {"uri": "a://1"}),
            ("two", "resources/read", {"uri": "a://2"}),
        ]
    }
    for key in keys.values():
        assert key is not None
        cache.remember(key, {"ttlMs": 60_000})

    def kept() -> set[str]:
        return {name for name, key in keys.items() if key is not None and cache.get(key) is not None}

    cache.forget_for("notifications/message", {})
    assert kept() == set(keys)
    cache.forget_for("notifications/resources/updated", {"uri": "a://1"})
    assert kept() == {"tools", "resources", "templates", "two"}
    cache.forget_for("notifications/resources/list_changed", {})
    assert kept() == {"tools", "two"}
    cache.forget_for("notifications/tools/list_changed", {})
    assert kept() == {"two"}
