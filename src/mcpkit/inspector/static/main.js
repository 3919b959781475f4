// The inspector page: the connect bar, the backend's events, and what a connection's state shows.
// Each tab is a module of its own (tools.js, resources.js, prompts.js, server.js).

import { clear, h } from "./dom.js";
import { listened, listening } from "./listen.js";
import { logEvent, logTraffic, setupClearButtons } from "./logs.js";
import { refreshPrompts } from "./prompts.js";
import { ask, closed } from "./questions.js";
import { refreshResources } from "./resources.js";
import { roots, showServer } from "./server.js";
import { connectOptions, setupSettings, showSettings, signin, signinDone } from "./settings.js";
import { $, api, onEvents, state } from "./state.js";
import { refreshTools, resetToolDetail } from "./tools.js";

// -- events from the backend ------------------------------------------------------------------------

function onEvent(event) {
  switch (event.type) {
    case "hello":
      hello(event);
      break;
    case "status":
      status(event);
      break;
    case "traffic":
      logTraffic(event.dir, event.message, event.time);
      break;
    case "notification":
      notification(event);
      break;
    case "listened":
      listened(event, refreshFor);
      break;
    case "listening":
      listening(event);
      break;
    case "progress":
      progress(event);
      break;
    case "stderr":
      logEvent("stderr", `stderr: ${event.line}`, undefined, event.time);
      break;
    case "question":
      logEvent("question", `server asks: ${event.method}`, event.params, event.time);
      ask(api, event);
      break;
    case "questionClosed":
      closed(api, event.key);
      break;
    case "signin":
      signin(event);
      break;
    case "reload":
      logEvent("reload", `changed: ${event.files.join(", ")}`, undefined, event.time);
      if (state.target && state.target.kind === "dev") connect(state.target, state.version, "reloaded");
      break;
    case "notice":
      logEvent("notice", event.text, undefined, event.time);
      break;
    case "dropped":
      logEvent("dropped", `${event.count} events dropped (the page fell behind)`);
      break;
    case "offline":
      setStatus("offline", "inspector offline (is mcpkit dev still running?)");
      break;
  }
}

function hello(event) {
  state.dev = event.dev;
  const revision = $("revision");
  if (revision.options.length === 1) for (const version of event.versions) revision.append(h("option", { value: version }, version));
  $("target-kind").querySelector('option[value="dev"]').disabled = !event.dev;
  if (!state.target && event.dev) state.target = { kind: "dev", value: "" };
  showTarget();
  if (state.target) connect(state.target, state.version, "connected");
}

function showTarget() {
  const target = state.target || { kind: state.dev ? "dev" : "command", value: "" };
  $("target-kind").value = target.kind;
  $("target-value").value = target.kind === "dev" ? state.dev || "" : target.value;
  $("target-value").disabled = target.kind === "dev";
  $("revision").value = state.version;
  showSettings(target.kind);
}

function setStatus(kind, text) {
  $("status").dataset.state = kind;
  $("status").textContent = text;
  $("status").title = text; // the badge may cut a long line short
}

function status(event) {
  if (event.state === "connected") {
    state.info = event;
    const name = event.serverInfo ? [event.serverInfo.name, event.serverInfo.version].filter(Boolean).join(" ") : "server";
    setStatus("connected", `${name} · ${event.protocolVersion}`);
    $("status").dataset.version = event.protocolVersion;
    signinDone();
  } else if (event.state === "connecting") {
    setStatus("connecting", "connecting…");
  } else if (event.state === "failed") {
    failed(event.error);
  } else if (event.state === "disconnected" && event.reason !== "closed by the inspector") {
    setStatus("disconnected", `disconnected: ${event.reason}`);
    forget();
  }
  const text = event.state === "connected" ? `connected at ${event.protocolVersion}` : `${event.state}${event.error ? `: ${event.error}` : event.reason ? `: ${event.reason}` : ""}`;
  logEvent("status", text, event, event.time);
}

/** The connection failed: say why in one line, and show nothing of the server that was. */
function failed(message) {
  setStatus("failed", `failed: ${message}`);
  signinDone();
  forget();
}

/** No server: lists, counts, forms, results and the server tab go back to their empty state. */
function forget() {
  state.info = null;
  state.tools = [];
  delete document.body.dataset.ready;
  for (const id of ["tool-list", "resource-list", "template-list", "prompt-list"]) clear($(id));
  for (const id of ["tools-count", "resources-count", "prompts-count"]) $(id).textContent = "";
  resetToolDetail();
  clear($("resource-detail")).append(h("p", { class: "hint" }, "Pick a resource or a template."));
  clear($("prompt-detail")).append(h("p", { class: "hint" }, "Pick a prompt."));
  showServer();
}

function notification(event) {
  const { method, params } = event;
  if (method === "notifications/message") {
    logEvent(`log level-${params.level}`, `log ${params.level}${params.logger ? ` [${params.logger}]` : ""}: ${typeof params.data === "string" ? params.data : JSON.stringify(params.data)}`, params, event.time);
  } else {
    logEvent("notification", method, params, event.time);
  }
  refreshFor(method);
}

/** A list changed: show it anew. */
function refreshFor(method) {
  if (method === "notifications/tools/list_changed") refreshTools();
  if (method === "notifications/resources/list_changed") refreshResources();
  if (method === "notifications/prompts/list_changed") refreshPrompts();
}

function progress(event) {
  const text = `progress ${event.progress}${event.total != null ? `/${event.total}` : ""}${event.message ? ` ${event.message}` : ""}`;
  logEvent("progress", text, event, event.time);
  const bar = document.querySelector(`progress[data-call="${event.callId}"]`);
  if (bar) {
    if (event.total) { bar.max = event.total; bar.value = event.progress; }
    bar.title = text;
  }
}

// -- connecting ---------------------------------------------------------------------------------------

async function connect(target, version, verb) {
  state.target = target;
  state.version = version;
  showTarget();
  delete document.body.dataset.ready; // set again once the lists are in (tests wait on it)
  try {
    const params = { target, protocolVersion: version, roots: roots(), logLevel: state.logLevel, ...connectOptions(target.kind) };
    const info = await api.op("connect", params);
    state.info = info; // the event stream says so too, but maybe later than this answer
    state.listen = { tools: false, prompts: false, resources: false, uris: [] };
    if (verb === "reloaded") logEvent("reload", `reloaded ${info.serverInfo ? info.serverInfo.name : "the server"}`);
    await Promise.all([refreshTools(), refreshResources(), refreshPrompts()]);
    showServer();
    document.body.dataset.ready = info.protocolVersion;
  } catch (error) {
    failed(error.message);
  }
}

// -- the page ----------------------------------------------------------------------------------------

function setupTabs() {
  for (const tab of document.querySelectorAll("#tabs [data-tab]")) {
    tab.addEventListener("click", () => {
      for (const other of document.querySelectorAll("#tabs [data-tab]")) {
        other.setAttribute("aria-selected", String(other === tab));
        $(`panel-${other.dataset.tab}`).hidden = other !== tab;
      }
    });
  }
}

function setupBar() {
  $("target-kind").addEventListener("change", () => {
    const kind = $("target-kind").value;
    $("target-value").disabled = kind === "dev";
    $("target-value").value = kind === "dev" ? state.dev || "" : "";
  });
  $("connect").addEventListener("click", () => {
    const kind = $("target-kind").value;
    connect({ kind, value: kind === "dev" ? "" : $("target-value").value.trim() }, $("revision").value, "connected");
  });
  $("target-value").addEventListener("keydown", (e) => { if (e.key === "Enter") $("connect").click(); });
  // A question must be answered with a button: Escape would leave the server waiting.
  $("question").addEventListener("cancel", (e) => e.preventDefault());
}

onEvents(onEvent);
setupTabs();
setupBar();
setupSettings();
setupClearButtons();
api.start();
