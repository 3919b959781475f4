"""Audit redaction: a key is secret by the words of its name, whatever its case or separators, at
any depth; a config's ``redact`` list adds words (``!name`` shows a key after all). Checked in the
audit log a real gateway process writes, and on the rule itself (hypothesis over name styles)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import Client, TextContent
from mcpkit.host.audit import REDACTED, AuditLog, Redaction, redact

from ._util import SERVERS, audit_lines, run

SECRET = "s3cr3t-value"
#: Argument keys an audit log must not show the values of, in the spellings callers use.
SECRET_KEYS = [
    "access_token", "refresh_token", "client_secret", "x-api-key", "X-Api-Key", "private_key", "bearer",
    "cookie", "passwd", "accessToken", "privateKey", "apiKey", "APIKey", "API_KEY", "apikey", "Authorization",
    "proxy-authorization", "Set-Cookie", "credentials", "aws_credential", "PASSWORD", "db password",
    "githubToken", "sessionKeys", "signing.key", "basic_auth", "passphrase", "ＴＯＫＥＮ",
]  # fmt: skip
#: Keys whose values stay: "key" counts only as a word of the name.
PLAIN_KEYS = ["text", "keyboard", "monkey", "keywords", "author", "hotkey", "donkey_count", "city"]


def nested(value: Any) -> dict[str, Any]:
    """Every secret key at the top, in an object, in a list of objects, and three objects deep."""
    flat = dict.fromkeys(SECRET_KEYS, value) | dict.fromkeys(PLAIN_KEYS, "plain")
    return {**flat, "inner": flat, "items": [flat, [flat]], "a": {"b": {"c": [{"d": flat}]}}}


def test_a_gateway_process_writes_no_secret_in_any_spelling_at_any_depth(tmp_path: Path) -> None:
    path = tmp_path / "gateway.json"
    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(SERVERS / "settings_box.py")]}
    extra = {"audit": {"path": str(tmp_path / "audit.jsonl"), "redact": ["pin", "!keyId"]},
             "policy": {"default": "allow"}}  # fmt: skip
    path.write_text(json.dumps({"mcpServers": {"box": server}, "mcpkit": extra}))
    settings = nested(SECRET) | {"user_pin": "1234", "keyId": "k-7", "key_id": "k-8"}

    async def main() -> None:
        async with Client([sys.executable, "-m", "mcpkit", "gateway", str(path)]) as client:
            result = await client.call_tool("box__save", {"settings": settings})
            assert isinstance(result.content[0], TextContent) and result.content[0].text.startswith("saved")

    run(main())
    text = (tmp_path / "audit.jsonl").read_text()
    assert SECRET not in text and "1234" not in text
    [line] = audit_lines(tmp_path)
    assert line["outcome"] == "ok"
    logged = line["arguments"]["settings"]
    for where in (
        logged,
        logged["inner"],
        logged["items"][0],
        logged["items"][1][0],
        logged["a"]["b"]["c"][0]["d"],
    ):
        assert {key: where[key] for key in SECRET_KEYS} == dict.fromkeys(SECRET_KEYS, REDACTED)
        assert {key: where[key] for key in PLAIN_KEYS} == dict.fromkeys(PLAIN_KEYS, "plain")
    # The config's words add to the defaults; "!keyId" shows keyId (and key_id: the same name).
    assert (logged["user_pin"], logged["keyId"], logged["key_id"]) == (REDACTED, "k-7", "k-8")


def test_a_redacted_value_is_replaced_whole_whatever_it_holds(tmp_path: Path) -> None:
    with (tmp_path / "audit.jsonl").open("w") as stream:
        written = AuditLog(stream).write(arguments={"credentials": {"user": "u", "items": [1, 2]}, "n": 1})
    assert written["arguments"] == {"credentials": REDACTED, "n": 1}


def test_lines_are_utf8_json_appended_one_a_call(tmp_path: Path) -> None:
    """Text is kept as it is (not escaped), a value JSON has no type for is written as its text, and
    a second log of the same file appends after the first's lines."""
    path = tmp_path / "logs" / "audit.jsonl"
    first = AuditLog(path)
    first.write(tool="météo", arguments={"city": "Zürich", "where": Path("/srv/data")}, outcome="ok")
    first.close()
    second = AuditLog(path)
    second.write(tool="echo", arguments={}, outcome="tool-error")
    second.close()
    raw = path.read_bytes()
    assert "météo".encode() in raw and b"\\u" not in raw
    lines = [json.loads(line) for line in raw.decode().splitlines()]
    assert [line["tool"] for line in lines] == ["météo", "echo"]
    assert lines[0]["arguments"] == {"city": "Zürich", "where": "/srv/data"}
    assert list(lines[0])[:2] == ["time", "tool"] and lines[0]["time"].endswith("+00:00")


def test_the_rule_in_words() -> None:
    rule = Redaction(["pin", "!sort_key", "-"])
    assert rule.secret("user_pin") and rule.secret("PIN") and rule.secret("spinner")  # a word: anywhere
    assert not rule.secret("sortKey") and not rule.secret("SORT-KEY") and rule.secret("sort_keys")
    assert not rule.secret("text")  # "-" normalises to nothing: it does not match every key
    assert redact({"Token": 1, "k": [{"apiKey": 2}]}) == {"Token": REDACTED, "k": [{"apiKey": REDACTED}]}


def test_a_rule_that_has_seen_the_keys_still_redacts_what_is_new_or_nested() -> None:
    """Arguments whose keys a rule has judged before (none secret) and whose values are flat are
    written as they are; a secret key, a new key or a nested value is looked at again."""
    rule = Redaction()
    seen = {"text": "a", "count": 1}
    assert rule.apply(seen) == seen and rule.apply(seen) is seen  # the second time: as it is
    assert rule.apply({"text": "b", "token": "t"}) == {"text": "b", "token": REDACTED}
    assert rule.apply({"text": "b", "token": "t"}) == {"text": "b", "token": REDACTED}
    assert rule.apply({"text": {"apiKey": "k"}}) == {"text": {"apiKey": REDACTED}}
    assert rule.apply({"count": [{"password": "p"}], "text": ("x",)}) == {
        "count": [{"password": REDACTED}],
        "text": ["x"],
    }


SECRET_WORDS = ["token", "secret", "password", "passwd", "key", "authorization", "cookie", "credential",
                "credentials", "bearer", "keys"]  # fmt: skip
OTHER_WORDS = ["access", "refresh", "client", "x", "api", "private", "github", "db", "user", "my", "v2"]


def styled(words: list[str], style: str) -> str:
    if style == "camel":
        return words[0].lower() + "".join(w.capitalize() for w in words[1:])
    if style == "pascal":
        return "".join(w.capitalize() for w in words)
    if style == "upper":
        return "_".join(w.upper() for w in words)
    if style == "title-kebab":
        return "-".join(w.capitalize() for w in words)
    return {"snake": "_", "kebab": "-", "space": " ", "dot": "."}[style].join(words)


STYLES = ["camel", "pascal", "upper", "title-kebab", "snake", "kebab", "space", "dot"]


@given(
    before=st.lists(st.sampled_from(OTHER_WORDS), max_size=3),
    word=st.sampled_from(SECRET_WORDS),
    after=st.lists(st.sampled_from(OTHER_WORDS), max_size=2),
    style=st.sampled_from(STYLES),
)
def test_any_name_with_a_secret_word_in_any_style_is_redacted(
    before: list[str], word: str, after: list[str], style: str
) -> None:
    key = styled([*before, word, *after], style)
    assert redact({key: "v", "list": [{key: "v"}]}) == {key: REDACTED, "list": [{key: REDACTED}]}, key


#: Words that are no secret alone (not "api" or "private": "apiKeyboard" reads as apikey...).
PLAIN_WORDS = ["access", "refresh", "client", "x", "github", "db", "user", "my", "v2", "keyboard", "monkey",
               "keywords", "name", "author", "hotkey"]  # fmt: skip


@given(words=st.lists(st.sampled_from(PLAIN_WORDS), min_size=1, max_size=4), style=st.sampled_from(STYLES))
def test_a_name_without_a_secret_word_is_kept(words: list[str], style: str) -> None:
    key = styled(words, style)
    assert redact({key: "v"}) == {key: "v"}, key


@pytest.mark.parametrize("key", ["monkeyKey", "keyboard_key", "Keyword-Keys"])
def test_key_as_a_word_beside_words_that_merely_contain_it(key: str) -> None:
    assert Redaction().secret(key)
