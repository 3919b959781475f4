"""A tool with typed arguments (pydantic models, a list of them, a Literal, an optional) gets a
nested form in the inspector: fieldsets, Add and Remove for the list, a select for the Literal,
messages naming each bad field before anything is sent, and a JSON toggle both ways."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .conftest import at_revision, keep_screenshot, opened, screenshot_stats

pytestmark = pytest.mark.e2e

SHOP = textwrap.dedent(
    """
    from typing import Literal

    from pydantic import BaseModel, Field

    from mcpkit import Server

    server = Server("shop", "1.0.0")


    class Line(BaseModel):
        item: str
        qty: int = Field(1, ge=1)


    class Order(BaseModel):
        customer: str
        lines: list[Line]
        speed: Literal["normal", "express"] = "normal"


    @server.tool
    def place_order(order: Order, note: str | None = None) -> str:
        "Place an order."
        lines = ", ".join(f"{line.qty} {line.item}" for line in order.lines)
        return f"{order.customer}: {lines} ({order.speed})" + (f" {note}" if note else "")
    """
)


@pytest.mark.parametrize("revision", ["auto", "2025-11-25"])
def test_a_typed_tool_gets_a_nested_form(page: Any, tmp_path: Path, revision: str) -> None:
    server = tmp_path / "shop.py"
    server.write_text(SHOP)
    with opened(page, str(server), "--no-reload"):
        at_revision(page, revision)
        page.click('.tool-item[data-name="place_order"]')
        order = page.locator(
            '#tool-detail fieldset.nested[data-path="order"], #tool-detail [data-path="order"] fieldset'
        )
        order.first.wait_for()
        assert page.locator('#tool-detail [data-path="order"] legend .required').count() == 1
        speed = page.locator('#tool-detail [data-path="order.speed"] select')
        assert speed.locator("option").all_inner_texts() == ["(unset)", "normal", "express"]
        assert page.locator('#tool-detail [data-path="note"] .required').count() == 0  # str | None

        page.fill('#tool-detail [data-path="order.customer"] input', "Ada")
        add = page.locator('#tool-detail [data-path="order.lines"] button.add-item')
        add.click()
        page.fill('#tool-detail [data-path="order.lines[0].qty"] input', "0")
        page.click("#call-tool")  # item missing, qty below its minimum: said, and nothing sent
        problem = page.inner_text("#tool-detail .problem")
        assert "order.lines[0].item is required" in problem
        assert "order.lines[0].qty: must be ≥ 1" in problem
        assert page.locator('#traffic li[data-dir="out"][data-method="tools/call"]').count() == 0

        page.fill('#tool-detail [data-path="order.lines[0].item"] input', "tea")
        page.fill('#tool-detail [data-path="order.lines[0].qty"] input', "2")
        add.click()
        page.fill('#tool-detail [data-path="order.lines[1].item"] input', "cake")
        add.click()
        page.locator('#tool-detail [data-path="order.lines"] .remove-item').nth(2).click()
        speed.select_option(label="express")
        shot = page.locator('#tool-detail [data-path="order"]').screenshot()
        keep_screenshot(shot, "nested-form.png", tmp_path)
        (_, height), colours = screenshot_stats(shot)
        assert height > 200 and colours > 20  # a drawn fieldset with its nested rows, not an empty box

        page.click("#call-tool")
        result = page.locator("#tool-output .result")
        result.wait_for()
        assert "Ada: 2 tea, 1 cake (express)" in result.inner_text()

        # The JSON toggle: the arguments as JSON, edited, and back into the form.
        page.click("#json-toggle")
        text = page.locator("#json-arguments")
        arguments = json.loads(text.input_value())
        assert arguments == {
            "order": {
                "customer": "Ada",
                "lines": [{"item": "tea", "qty": 2}, {"item": "cake", "qty": 1}],
                "speed": "express",
            }
        }
        arguments["order"]["customer"] = "Grace"
        arguments["note"] = "ring twice"
        text.fill(json.dumps(arguments))
        page.click("#json-toggle")
        assert page.input_value('#tool-detail [data-path="order.customer"] input') == "Grace"
        assert page.input_value('#tool-detail [data-path="order.lines[1].item"] input') == "cake"
        page.click("#call-tool")
        page.wait_for_selector("#tool-output .result:has-text('Grace: 2 tea, 1 cake (express) ring twice')")
