// The Server tab: what the server said about itself, ping, the log level, roots, the host config
// entry for this server, and (2026-07-28) subscriptions/listen.

import { clear, h, json, jsonBlock, put } from "./dom.js";
import { listenSection } from "./listen.js";
import { logEvent } from "./logs.js";
import { $, api, capable, requestTimeout, state } from "./state.js";

export function roots() {
  return state.rootsText.split("\n").map((s) => s.trim()).filter(Boolean);
}

export function showServer() {
  const detail = clear($("server-detail"));
  const info = state.info;
  if (!info) {
    detail.append(h("p", { class: "hint" }, "Not connected."));
    return;
  }
  const level = h("select", { id: "log-level" }, ["", "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"].map((l) => h("option", { value: l }, l || "(server default)")));
  level.value = state.logLevel;
  level.addEventListener("change", async () => {
    state.logLevel = level.value;
    try {
      await api.op("setLogLevel", { level: level.value });
      logEvent("status", `log level: ${level.value}`);
    } catch (error) {
      logEvent("status", `log level refused: ${error.message}`);
    }
  });
  const server = info.serverInfo || {};
  put(detail,
    h("h2", {}, [server.title || server.name || "Server", server.version].filter(Boolean).join(" ")),
    h("p", {}, `Protocol ${info.protocolVersion} (${info.era} era)`),
    server.description ? h("p", { class: "description" }, server.description) : null,
    info.instructions ? h("p", { class: "description" }, info.instructions) : null,
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "ping", onclick: ping }, "Ping"), h("span", { id: "ping-result", class: "hint" }),
      h("button", { type: "button", id: "copy-entry", onclick: copyEntry }, "Copy host config entry"), h("span", { id: "copy-result", class: "hint" })),
    h("pre", { id: "host-entry", class: "json", hidden: true }),
    capable("logging") ? h("p", {}, h("label", { for: "log-level" }, "Log level "), level) : null,
    info.era === "stateless" ? listenSection() : null,
    h("h3", {}, "Capabilities"), jsonBlock(info.capabilities || {}),
    h("h3", {}, "Roots offered to the server (one URI a line)"),
    h("textarea", { id: "roots", rows: 3 }, state.rootsText),
    h("div", { class: "buttons" }, h("button", { type: "button", id: "apply-roots", onclick: applyRoots }, "Apply roots")));
  $("roots").addEventListener("input", (e) => { state.rootsText = e.target.value; });
}

async function ping() {
  const out = $("ping-result");
  out.textContent = "…";
  delete out.dataset.ok;
  try {
    const result = await api.op("ping", { timeout: requestTimeout() });
    out.textContent = `answered in ${result.ms} ms (${result.method})`;
    out.dataset.ok = "true";
  } catch (error) {
    out.textContent = `no answer: ${error.message}`;
    out.dataset.ok = "false";
  }
}

/** The mcpServers entry for this server, shown and put on the clipboard (where the page may). */
async function copyEntry() {
  const out = $("copy-result");
  try {
    const text = json(await api.op("hostEntry"));
    const shown = $("host-entry");
    shown.textContent = text;
    shown.hidden = false;
    try {
      await navigator.clipboard.writeText(text);
      out.textContent = "copied";
    } catch {
      out.textContent = "shown below (the browser refused the clipboard)";
    }
  } catch (error) {
    out.textContent = error.message;
  }
}

async function applyRoots() {
  try {
    await api.op("setRoots", { roots: roots() });
    logEvent("status", `roots: ${roots().join(", ") || "(none)"}`);
  } catch (error) {
    logEvent("status", `roots not set: ${error.message}`);
  }
}
