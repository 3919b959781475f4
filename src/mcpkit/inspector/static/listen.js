// 2026-07-28 subscriptions/listen: the kinds and URIs the page listens for, and what arrives on it.

import { clear, h } from "./dom.js";
import { logEvent } from "./logs.js";
import { $, api, state } from "./state.js";

const MAX_SHOWN = 200;

/** Open (or replace, or end) the page's subscription with what state.listen asks for. */
export async function applyListen() {
  const acknowledged = await api.op("listen", state.listen);
  logEvent("status", `listening: ${describe(acknowledged)}`, acknowledged);
  return acknowledged;
}

export function describe(acknowledged) {
  if (!acknowledged || !Object.keys(acknowledged).length) return "nothing";
  const parts = Object.entries(acknowledged).filter(([, v]) => v === true).map(([k]) => k);
  const uris = acknowledged.resourceSubscriptions || [];
  return [...parts, ...uris].join(", ") || "nothing";
}

/** A `listening` event: what the server agreed to send (null: the subscription is over). */
export function listening(event) {
  const status = $("listen-status");
  if (status) status.textContent = event.acknowledged ? `listening for ${describe(event.acknowledged)}` : event.reason || "not listening";
  if (!event.acknowledged) state.listen = { tools: false, prompts: false, resources: false, uris: [] };
}

/** A `listened` event: one notification of the stream, shown in the Server tab and in Events. */
export function listened(event, refresh) {
  logEvent("notification listen", `${event.method} (subscriptions/listen)`, event.params, event.time);
  const log = $("listen-log");
  if (log) {
    log.prepend(h("li", { dataset: { method: event.method } }, h("code", {}, event.method), " ", event.params && event.params.uri ? event.params.uri : ""));
    while (log.childElementCount > MAX_SHOWN) log.lastElementChild.remove();
  }
  refresh(event.method);
}

/** The Server tab's section: checkboxes for the list kinds, the URIs, Listen, and what arrived. */
export function listenSection() {
  const boxes = ["tools", "prompts", "resources"].map((kind) => {
    const box = h("input", { type: "checkbox", id: `listen-${kind}` });
    box.checked = state.listen[kind];
    return [kind, box, h("label", { class: "choice" }, box, ` ${kind} list changes`)];
  });
  const uris = h("textarea", { id: "listen-uris", rows: 2, placeholder: "resource URIs to watch, one a line" }, state.listen.uris.join("\n"));
  const status = h("span", { id: "listen-status", class: "hint" }, "not listening");
  const problem = h("p", { class: "problem" });
  const go = async () => {
    state.listen = { ...Object.fromEntries(boxes.map(([kind, box]) => [kind, box.checked])), uris: uris.value.split("\n").map((s) => s.trim()).filter(Boolean) };
    problem.textContent = "";
    try {
      await applyListen();
    } catch (error) {
      problem.textContent = error.message;
    }
  };
  return h("section", { id: "listen" },
    h("h3", {}, "Listen for changes (subscriptions/listen)"),
    h("div", { class: "choices" }, boxes.map(([, , label]) => label)), uris,
    h("div", { class: "buttons" }, h("button", { type: "button", id: "listen-apply", onclick: go }, "Listen"), status), problem,
    clear(h("ol", { id: "listen-log", class: "log short" })));
}
