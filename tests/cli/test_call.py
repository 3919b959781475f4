"""``mcpkit call``: arguments typed from the input schema, results printed once, binary summarised or
saved, progress and logs on stderr, sampling and elicitation answered or refused."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from .conftest import NOTES, TRAVEL, WEATHER, run_mcpkit


def test_key_value_arguments_are_typed_by_the_schema() -> None:
    # days is an integer: "2" is read as JSON; location is a string: "123" stays text.
    called = run_mcpkit("call", WEATHER, "forecast", "location=123", "days=2")
    assert called.returncode == 0, called.stderr
    assert [day[:7] for day in json.loads(called.stdout)] == ["day 1: ", "day 2: "]
    as_text = run_mcpkit("call", WEATHER, "get_weather", "location=123")
    assert as_text.stdout.startswith("Current weather in 123:\n")
    raw = run_mcpkit("call", WEATHER, "forecast", "location=123", "days:=2")
    assert raw.stdout == called.stdout
    one_object = run_mcpkit("call", WEATHER, "forecast", '{"location": "123", "days": 2}')
    assert one_object.stdout == called.stdout


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["location=Oslo", "days=abc"], "mcpkit: argument days='abc': days must be an integer (as JSON)\n"),
        (["days=2"], "mcpkit: tool forecast needs location: add location=...\n"),
        (["locaton=Oslo"], "mcpkit: no argument 'locaton' on tool forecast; did you mean location?\n"),
        (
            ["Oslo"],
            "mcpkit: argument 'Oslo' is not key=value (or give tool forecast one JSON object: "
            "'{\"key\": ...}')\n",
        ),
        (
            ["{oops"],
            "mcpkit: the arguments are not valid JSON: Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1)\n",
        ),
    ],
)
def test_bad_arguments_are_one_line_naming_the_field(words: list[str], message: str) -> None:
    called = run_mcpkit("call", WEATHER, "forecast", *words)
    assert (called.returncode, called.stderr, called.stdout) == (2, message, "")


def test_unknown_tools_get_a_suggestion_or_the_list() -> None:
    close = run_mcpkit("call", WEATHER, "get_wether", "location=Oslo")
    assert close.returncode == 2
    assert (
        close.stderr
        == "mcpkit: no tool 'get_wether' on weather; did you mean get_weather or get_weather_data?\n"
    )
    far = run_mcpkit("call", WEATHER, "launch_rocket")
    assert far.stderr == (
        "mcpkit: no tool 'launch_rocket' on weather; it has get_weather, get_weather_data, forecast\n"
    )


def test_structured_content_is_printed_once() -> None:
    called = run_mcpkit("call", WEATHER, "get_weather_data", "location=Rome")
    assert called.returncode == 0, called.stderr
    value = json.loads(called.stdout)  # the whole of stdout is the one JSON value
    assert value["location"] == "Rome" and value["unit"] == "celsius"
    as_json = json.loads(run_mcpkit("call", WEATHER, "get_weather_data", "location=Rome", "--json").stdout)
    assert as_json["structuredContent"] == value
    assert json.loads(as_json["content"][0]["text"]) == value


def test_a_tool_error_prints_its_text_and_exits_1() -> None:
    failed = run_mcpkit("call", WEATHER, "forecast", "location=x", "days=9")
    assert failed.returncode == 1
    assert "days must be between 1 and 7" in failed.stdout


def test_binary_content_is_summarised_and_saved(everything_url: str, tmp_path: Path) -> None:
    image = run_mcpkit("call", everything_url, "test_image_content")
    assert image.returncode == 0, image.stderr
    assert image.stdout == "[image: image/png, 71 B]\n"
    saved = run_mcpkit("call", everything_url, "test_multiple_content_types", "--save", str(tmp_path / "out"))
    assert saved.stdout.splitlines() == [
        "Multiple content types test:",
        f"[image: image/png, 71 B, saved to {tmp_path / 'out' / 'image-1.png'}]",
        "[resource: test://mixed-content-resource, application/json]",
        '{"test": "data", "value": 123}',
    ]
    assert (tmp_path / "out" / "image-1.png").read_bytes().startswith(b"\x89PNG")
    audio = run_mcpkit("call", everything_url, "test_audio_content", "--save", str(tmp_path / "out"))
    assert audio.stdout.startswith("[audio: audio/wav, ") and "audio-1.wav" in audio.stdout
    blob = run_mcpkit("read", everything_url, "test://static-binary")
    assert blob.stdout == "[blob: image/png, 71 B]\n"


def test_progress_and_logs_are_plain_lines_on_stderr(everything_url: str) -> None:
    progress = run_mcpkit("call", everything_url, "test_tool_with_progress")
    assert progress.returncode == 0, progress.stderr
    assert progress.stderr.splitlines() == [
        "progress 0/100: Completed step 0 of 100",
        "progress 50/100: Completed step 50 of 100",
        "progress 100/100: Completed step 100 of 100",
    ]
    assert "progress" not in progress.stdout
    logs = run_mcpkit("call", everything_url, "test_tool_with_logging", "--log-level", "info")
    assert logs.stderr.splitlines() == [
        "server info: Tool execution started",
        "server info: Tool processing data",
        "server info: Tool execution completed",
    ]
    assert logs.stdout == "Tool with logging executed successfully\n"


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_log_level_asks_the_server_for_logs(everything_url: str, revision: str) -> None:
    quiet = run_mcpkit("call", everything_url, "test_logging_tool", "--log-level", "error",
                       "--protocol-version", revision)  # fmt: skip
    assert quiet.returncode == 0 and quiet.stderr == ""
    loud = run_mcpkit("call", everything_url, "test_logging_tool", "--log-level", "debug",
                      "--protocol-version", revision)  # fmt: skip
    assert loud.stderr == "server info: Diagnostic trace logging activated\n"


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-06-18"])
def test_sampling_is_refused_clearly_or_answered_by_a_command(everything_url: str, revision: str) -> None:
    refused = run_mcpkit(
        "call", everything_url, "test_sampling", "prompt=hello", "--protocol-version", revision
    )
    assert refused.returncode == 1
    assert "--sampling-command CMD" in refused.stderr.splitlines()[0]
    # The command gets the request's params as JSON and its stdout is the reply.
    upper = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
        "import json, sys; print(json.load(sys.stdin)['messages'][0]['content']['text'].upper())"
    )
    answered = run_mcpkit("call", everything_url, "test_sampling", "prompt=hello",
                          "--protocol-version", revision, "--sampling-command", upper)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout == "LLM response: HELLO\n"
    failing = run_mcpkit("call", everything_url, "test_sampling", "prompt=hello",
                         "--protocol-version", revision, "--sampling-command", "exit 3")  # fmt: skip
    assert "mcpkit: the sampling command 'exit 3' failed (exit code 3)" in failing.stderr


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_elicitation_off_a_terminal_is_cancelled_with_one_line(revision: str) -> None:
    called = run_mcpkit("call", TRAVEL, "plan_trip", "destination=Paris", "--protocol-version", revision)
    assert called.returncode == 1
    assert called.stdout == "The trip to Paris was not confirmed (cancel).\n"
    assert called.stderr == (
        "mcpkit: left the server's question 'Plan a trip to Paris?' unanswered: stdin is not a terminal "
        "(run the command in a terminal to answer it)\n"
    )


def test_roots_are_offered_with_root(tmp_path: Path) -> None:
    called = run_mcpkit("call", TRAVEL, "where_to_save", "--root", str(tmp_path), "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"] == {"result": [tmp_path.resolve().as_uri()]}


def test_read_and_prompt(everything_url: str) -> None:
    text = run_mcpkit("read", everything_url, "test://static-text")
    assert text.stdout == "This is the content of the static text resource.\n"
    templated = run_mcpkit("read", everything_url, "test://template/5/data", "--json")
    assert json.loads(json.loads(templated.stdout)["contents"][0]["text"])["id"] == "5"
    typo = run_mcpkit("read", everything_url, "test://static-txt")
    assert typo.returncode == 2
    assert typo.stderr == (
        "mcpkit: no resource 'test://static-txt' on mcpkit-everything; "
        "did you mean test://static-text or test://static-binary?\n"
    )
    prompt = run_mcpkit("prompt", everything_url, "test_prompt_with_arguments", "arg1=a b", "arg2=2")
    assert prompt.stdout == "[user]\nPrompt with arguments: arg1='a b', arg2='2'\n"
    missing = run_mcpkit("prompt", everything_url, "test_prompt_with_arguments", "arg1=a")
    assert (missing.returncode, missing.stderr) == (
        2,
        "mcpkit: prompt test_prompt_with_arguments needs arg2: add arg2=...\n",
    )
    unknown = run_mcpkit("prompt", everything_url, "test_simple_promt")
    assert "did you mean test_simple_prompt?" in unknown.stderr


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-11-25"])
def test_calls_over_http_in_the_handshake_era(everything_url: str, revision: str) -> None:
    called = run_mcpkit("call", everything_url, "greet", "name=Ada", "--protocol-version", revision, "--json")
    assert called.returncode == 0, called.stderr
    result = json.loads(called.stdout)
    assert result["content"][0]["text"] == "Hello, Ada!"
    assert ("structuredContent" in result) is (revision >= "2025-06-18")


def test_a_missing_capability_names_the_option() -> None:
    called = run_mcpkit("call", TRAVEL, "where_to_save")
    assert called.returncode == 1
    assert called.stderr.endswith("(code -32021); offer roots with --root DIR\n")
    assert len(called.stderr.splitlines()) == 1


def test_a_kind_the_server_does_not_offer_is_a_usage_error() -> None:
    done = run_mcpkit("prompt", WEATHER, "summarize")
    assert (done.returncode, done.stderr) == (2, "mcpkit: weather offers no prompts\n")


def test_a_uri_that_matches_a_template_gets_the_servers_message() -> None:
    done = run_mcpkit("read", NOTES, "notes://nb_missing")
    assert (done.returncode, done.stderr) == (1, "mcpkit: notes://nb_missing: no notebook nb_missing\n")


def test_arguments_from_stdin_with_overrides() -> None:
    import subprocess

    from ..conftest import ROOT

    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "call", WEATHER, "forecast", "-", "days=1"],
        cwd=ROOT,
        input='{"location": "123", "days": 5}',
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == 1
