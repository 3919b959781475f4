"""Every tool, resource, prompt and extension the official conformance suite expects of a server.

The suite (npm ``@modelcontextprotocol/conformance``) connects to a server over Streamable HTTP and
calls fixtures by name: ``test_simple_text``, ``test://static-text``, ``test_simple_prompt``,
``slow_compute`` and so on. This file provides them all with mcpkit's ordinary decorator API, so it
doubles as a tour of that API: content types, logging, progress, errors, sampling and elicitation
(which become multi round-trip ``InputRequiredResult`` rounds for 2026-07-28 clients), resources
and templates, subscriptions, prompts, completion, tasks, and the skills extension.

    mcpkit run examples/everything.py --transport http --port 8000
    mcpkit call http://127.0.0.1:8000/mcp test_simple_text '{}'
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Annotated, Any

from mcpkit import (
    AudioContent,
    ContentBlock,
    Context,
    EmbeddedResource,
    ImageContent,
    InternalError,
    PromptMessage,
    ResourceContents,
    Server,
    TextContent,
    ToolError,
    header,
)

server = Server("mcpkit-everything", "1.0.0", instructions="Conformance fixtures for mcpkit.")

# A 1x1 PNG and a tiny WAV: the suite only checks that the data is base64 with a MIME type.
IMAGE = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8cfc0f01f0005000201ffa7a5fb"
        "560000000049454e44ae426082"
    )
).decode()
AUDIO = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
    b"\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()

# -- content types ---------------------------------------------------------------------------------


@server.tool
def test_simple_text() -> TextContent:
    """Tests simple text content response"""
    return TextContent(text="This is a simple text response for testing.")


@server.tool
def test_image_content() -> ImageContent:
    """Tests image content response"""
    return ImageContent(data=IMAGE, mime_type="image/png")


@server.tool
def test_audio_content() -> AudioContent:
    """Tests audio content response"""
    return AudioContent(data=AUDIO, mime_type="audio/wav")


@server.tool
def test_embedded_resource() -> EmbeddedResource:
    """Tests embedded resource content response"""
    return EmbeddedResource(
        resource=ResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )
    )


@server.tool
def test_multiple_content_types() -> list[ContentBlock]:
    """Tests response with multiple content types (text, image, resource)"""
    data = json.dumps({"test": "data", "value": 123})
    return [
        TextContent(text="Multiple content types test:"),
        ImageContent(data=IMAGE, mime_type="image/png"),
        EmbeddedResource(
            resource=ResourceContents(
                uri="test://mixed-content-resource", mime_type="application/json", text=data
            )
        ),
    ]


# -- logging, progress, errors ---------------------------------------------------------------------


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution"""
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(message)
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool
async def test_logging_tool(ctx: Context) -> str:
    """Logs one line; a client hears it only if it asked for logs (logging level)."""
    await ctx.info("Diagnostic trace logging activated")
    return "Logging evaluated"


@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications"""
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100, f"Completed step {done} of 100")
        await asyncio.sleep(0.05)
    token = ctx.meta.get("progressToken")
    return str(token if token is not None else 0)


@server.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Reports progress on the request's own stream, then answers."""
    await ctx.report_progress(50, 100, "half way")
    return "Streaming complete"


@server.tool
def test_error_handling() -> str:
    """Tests error response handling"""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool
async def test_reconnection(ctx: Context) -> str:
    """Closes the response stream mid-call; the client reconnects (SSE polling) to get the result."""
    await ctx.close_response_stream()
    await asyncio.sleep(0.1)
    return (
        "Reconnection test completed successfully. If you received this, the client properly "
        "reconnected after stream closure."
    )


# -- sampling and elicitation (server-to-client requests, or InputRequiredResult in 2026-07-28) ----


@server.tool
async def test_sampling(prompt: Annotated[str, "The prompt to send to the LLM"], ctx: Context) -> str:
    """Tests server-initiated sampling (LLM completion request)"""
    result = await ctx.sample(prompt, max_tokens=100)
    text = result.content.get("text") if isinstance(result.content, dict) else None
    return f"LLM response: {text or 'No response'}"


@server.tool
async def test_elicitation(message: Annotated[str, "The message to show the user"], ctx: Context) -> str:
    """Tests server-initiated elicitation (user input request)"""
    answer = await ctx.elicit(
        message,
        {
            "type": "object",
            "properties": {"response": {"type": "string", "description": "User's response"}},
            "required": ["response"],
        },
    )
    return f"User response: action={answer.action}, content={json.dumps(answer.content or {})}"


@server.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Tests elicitation with default values per SEP-1034"""
    answer = await ctx.elicit(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": True},
            },
            "required": [],
        },
    )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"


def _choices(prefix: str, titles: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"const": f"{prefix}{n}", "title": title} for n, title in enumerate(titles, start=1)]


@server.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Tests elicitation with enum schema improvements per SEP-1330"""
    options = ["option1", "option2", "option3"]
    answer = await ctx.elicit(
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "description": "Select one option", "enum": options},
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": _choices("value", ("First Option", "Second Option", "Third Option")),
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": options},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"anyOf": _choices("value", ("First Choice", "Second Choice", "Third Choice"))},
                },
            },
            "required": [],
        },
    )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"


def _form(*fields: str, kind: str = "string") -> dict[str, Any]:
    return {"type": "object", "properties": {f: {"type": kind} for f in fields}, "required": list(fields)}


def _field(answer: Any, name: str) -> str:
    return str((answer.content or {}).get(name, ""))


@server.tool
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling: a client that did not declare it gets -32021."""
    await ctx.sample("Say hello", max_tokens=10)
    return "Success"


@server.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name (one InputRequiredResult round in 2026-07-28)."""
    answer = await ctx.elicit("What is your name?", _form("name"), key="user_name")
    return f"Hello, {_field(answer, 'name')}!"


@server.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    result = await ctx.sample("What is the capital of France?", max_tokens=100, key="sample_request")
    text = result.content.get("text") if isinstance(result.content, dict) else None
    return f"Sampling result: {text or 'no response'}"


@server.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots."""
    roots = await ctx.list_roots(key="roots_request")
    return f"Found {len(roots)} root(s)"


@server.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """One round whose state travels sealed in requestState."""
    answer = await ctx.elicit("Please confirm", _form("ok", kind="boolean"), key="confirm")
    return "state-ok: requestState validated" if (answer.content or {}).get("ok") else "not confirmed"


@server.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Three questions in one round: a form, a sampling request and the roots."""
    name, greeting, roots = await ctx.gather(
        ctx.elicit("What is your name?", _form("name"), key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    text = greeting.content.get("text") if isinstance(greeting.content, dict) else None
    return f"Name: {_field(name, 'name')}; Greeting: {text or 'Hello there!'}; Roots: {len(roots)}"


@server.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Two rounds, one question each; the first answer is kept in the sealed state."""
    name = await ctx.elicit("Step 1: What is your name?", _form("name"), key="step1")
    color = await ctx.elicit("Step 2: What is your favorite color?", _form("color"), key="step2")
    return f"Multi-round complete for {_field(name, 'name')} who likes {_field(color, 'color')}"


@server.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """A tampered requestState is refused (-32602): mcpkit seals it with an HMAC."""
    await ctx.elicit("Please confirm", _form("ok", kind="boolean"), key="confirm")
    return "integrity-ok: state verified"


@server.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only for what the client declared."""
    declared = ctx.client_capabilities
    questions: list[Any] = []
    if "elicitation" in declared:
        questions.append(ctx.elicit("Elicitation input", _form("value"), key="elicit_input"))
    if "sampling" in declared:
        questions.append(ctx.sample("Sample request", max_tokens=50, key="sample_input"))
    if not questions:
        return "No supported capabilities declared"
    await ctx.gather(*questions)
    return "capabilities-ok"


# -- list changes, schemas, headers ------------------------------------------------------------------


@server.tool
async def test_trigger_tool_change() -> str:
    """Tells listeners that the tool list changed."""
    await server.notify_list_changed("tools")
    return "Mutation triggered"


@server.tool
async def test_trigger_prompt_change() -> str:
    """Tells listeners that the prompt list changed."""
    await server.notify_list_changed("prompts")
    return "Mutation triggered"


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, str] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"""
    given = {"name": name, "address": address, "contactMethod": contactMethod, "phone": phone, "email": email}
    return f"JSON Schema 2020-12 tool called with: {json.dumps({k: v for k, v in given.items() if v is not None})}"


@server.tool
def test_headers(region: Annotated[str, header("Region")], query: str = "") -> str:
    """Mirrors its region argument into an Mcp-Param-Region header."""
    return f"region={region} query={query}"


# -- tasks (2025-11-25 tasks and the 2026-07-28 tasks extension) -----------------------------------


@server.tool
def greet(name: str) -> str:
    """Say hello (never a task)."""
    return f"Hello, {name}!"


@server.tool(task_support="optional")
async def slow_compute(seconds: float = 1.0, label: str = "job") -> str:
    """Sleep for *seconds*, then answer; runs as a task for clients that can take one."""
    await asyncio.sleep(seconds)
    return f"{label} done after {seconds:g}s"


@server.tool(task_support="required")
async def failing_job() -> str:
    """A task whose tool fails: it completes with isError."""
    await asyncio.sleep(1)
    raise ToolError("failing_job failed, as it always does")


@server.tool(task_support="optional")
async def protocol_error_job() -> str:
    """A task that fails at the protocol level: its status is "failed"."""
    raise InternalError("protocol_error_job crashed")


@server.tool(task_support="optional")
async def confirm_delete(ctx: Context, path: str = "/tmp/example") -> str:
    """Asks for confirmation while it runs as a task."""
    answer = await ctx.elicit(f"Delete {path}?", _form("confirm", kind="boolean"))
    return f"deleted {path}" if (answer.content or {}).get("confirm") else f"kept {path}"


@server.tool(task_support="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once while it runs as a task."""
    first, second = await ctx.gather(
        ctx.elicit("First value?", _form("value"), key="first"),
        ctx.elicit("Second value?", _form("value"), key="second"),
    )
    return f"first={_field(first, 'value')} second={_field(second, 'value')}"


@server.tool(task_support="required", defer_task=True)
async def test_tool_with_task(ctx: Context) -> str:
    """Gathers the user's name over a multi round-trip round, then goes on as a task."""
    answer = await ctx.elicit("What is your name?", _form("name"), key="user_name")
    await ctx.become_task()
    await asyncio.sleep(0.2)
    return f"Task finished for {_field(answer, 'name')}"


# -- resources ---------------------------------------------------------------------------------------


@server.resource(
    "test://static-text", name="static-text", title="Static Text Resource", mime_type="text/plain"
)
def static_text() -> str:
    """A static text resource for testing"""
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary", name="static-binary", title="Static Binary Resource", mime_type="image/png"
)
def static_binary() -> bytes:
    """A static binary resource (image) for testing"""
    return base64.b64decode(IMAGE)


@server.resource(
    "test://template/{id}/data", name="template", title="Resource Template", mime_type="application/json"
)
def template(id: str) -> dict[str, Any]:
    """A resource template with parameter substitution"""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@server.resource(
    "test://watched-resource", name="watched-resource", title="Watched Resource", mime_type="text/plain"
)
def watched_resource() -> str:
    """A resource that clients can subscribe to"""
    return "Watched resource content"


# -- prompts and completion --------------------------------------------------------------------------


@server.prompt(title="Simple Test Prompt")
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@server.prompt(title="Prompt With Arguments")
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"], arg2: Annotated[str, "Second test argument"]
) -> str:
    """A prompt with required arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(title="Prompt With Embedded Resource")
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, "URI of the resource to embed"],
) -> list[Any]:
    """A prompt that includes an embedded resource"""
    resource = ResourceContents(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
    )
    return [EmbeddedResource(resource=resource), "Please process the embedded resource above."]


@server.prompt(title="Prompt With Image")
def test_prompt_with_image() -> list[Any]:
    """A prompt that includes image content"""
    return [ImageContent(data=IMAGE, mime_type="image/png"), "Please analyze the image above."]


@server.prompt
async def test_input_required_result_prompt(ctx: Context) -> list[PromptMessage]:
    """A prompt that asks the user for context first."""
    answer = await ctx.elicit("What context should the prompt use?", _form("context"), key="user_context")
    return [
        PromptMessage(
            role="user", content=TextContent(text=f"Prompt with context: {_field(answer, 'context')}")
        )
    ]


@server.completion(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str, arguments: dict[str, str]) -> list[str]:
    return [v for v in ("alpha", "beta", "gamma") if v.startswith(value)]


@server.completion(resource="test://template/{id}/data", argument="id")
def complete_id(value: str, arguments: dict[str, str]) -> list[str]:
    return [v for v in ("1", "2", "3", "123") if v.startswith(value)]


# -- the skills extension (SEP-2640) ------------------------------------------------------------------
# Every folder with a SKILL.md below examples/skills becomes a skill: skills/list, skills/get, its
# files as skill:// resources and resources/directory/read for its folders.
server.add_skills(Path(__file__).parent / "skills")


if __name__ == "__main__":
    server.run()
