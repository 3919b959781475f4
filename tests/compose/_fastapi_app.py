"""A small FastAPI app for ``from_fastapi`` tests (no ``from __future__ import annotations``: FastAPI
reads the annotations of the app's functions at run time, and the model is defined inside)."""

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Header, HTTPException, Request
from pydantic import BaseModel


class Item(BaseModel):
    name: str
    price: float
    tags: list[str] = []


def make_app(events: list[str] | None = None) -> FastAPI:
    """A fresh app (its own items), so each test starts from the same state; its lifespan appends
    "startup" and "shutdown" to *events*."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if events is not None:
            events.append("startup")
        yield
        if events is not None:
            events.append("shutdown")

    app = FastAPI(title="Inventory", version="3.2.1", lifespan=lifespan)
    items: dict[int, Item] = {1: Item(name="hammer", price=9.5, tags=["tools"])}

    @app.get("/items/{item_id}", operation_id="get_item", summary="One item")
    async def get_item(item_id: int, currency: str = "EUR") -> dict[str, Any]:
        if item_id not in items:
            raise HTTPException(status_code=404, detail=f"no item {item_id}")
        return {"id": item_id, "currency": currency, **items[item_id].model_dump()}

    @app.post("/items", operation_id="add_item", status_code=201)
    async def add_item(item: Item, x_batch: str | None = Header(default=None)) -> dict[str, Any]:
        item_id = max(items) + 1
        items[item_id] = item
        return {"id": item_id, "batch": x_batch, **item.model_dump()}

    @app.get("/headers", operation_id="headers")
    async def headers(request: Request) -> dict[str, str]:
        return dict(request.headers)

    @app.get("/items", operation_id="list_items")
    async def list_items() -> list[str]:
        return [item.name for item in items.values()]

    return app
