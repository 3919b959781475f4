// The inspector page: connect bar, tools / resources / prompts / server panels, events and traffic.

import { Api } from "./api.js";
import { AppView, appMayCall, modelMayCall, uiResourceOf } from "./apps.js";
import { renderContents, renderError, renderPrompt, renderToolResult } from "./content.js";
import { clear, h, jsonBlock } from "./dom.js";
import { schemaForm } from "./forms.js";
import { logEvent, logTraffic, setupClearButtons } from "./logs.js";
import { ask, closed } from "./questions.js";
import { expand, variables } from "./uritemplate.js";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token") || "";
const state = { dev: null, info: null, tools: [], target: null, version: "auto", calls: 0, apps: [], logLevel: "info" };
const api = new Api(token, onEvent);
let rootsText = ""; // the roots offered to the server, one URI a line (Server tab)

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
}

function setStatus(kind, text) {
  $("status").dataset.state = kind;
  $("status").textContent = text;
}

function status(event) {
  if (event.state === "connected") {
    state.info = event;
    const name = event.serverInfo ? `${event.serverInfo.name} ${event.serverInfo.version || ""}`.trim() : "server";
    setStatus("connected", `${name} · ${event.protocolVersion}`);
    $("status").dataset.version = event.protocolVersion;
  } else if (event.state === "connecting") {
    setStatus("connecting", "connecting…");
  } else if (event.state === "failed") {
    state.info = null;
    setStatus("failed", `failed: ${event.error}`);
  } else if (event.state === "disconnected") {
    if (event.reason !== "closed by the inspector") setStatus("disconnected", `disconnected: ${event.reason}`);
  }
  logEvent("status", event.state === "connected" ? `connected at ${event.protocolVersion}` : `${event.state}${event.error ? `: ${event.error}` : event.reason ? `: ${event.reason}` : ""}`, event, event.time);
}

function notification(event) {
  const { method, params } = event;
  if (method === "notifications/message") {
    logEvent(`log level-${params.level}`, `log ${params.level}${params.logger ? ` [${params.logger}]` : ""}: ${typeof params.data === "string" ? params.data : JSON.stringify(params.data)}`, params, event.time);
  } else {
    logEvent("notification", method, params, event.time);
  }
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
    const info = await api.op("connect", { target, protocolVersion: version, roots: roots(), logLevel: state.logLevel });
    state.info = info; // the event stream says so too, but maybe later than this answer
    if (verb === "reloaded") logEvent("reload", `reloaded ${info.serverInfo ? info.serverInfo.name : "the server"}`);
    await refreshAll();
    document.body.dataset.ready = info.protocolVersion;
  } catch (error) {
    state.info = null;
    setStatus("failed", `failed: ${error.message}`);
    for (const id of ["tool-list", "resource-list", "template-list", "prompt-list"]) clear($(id));
  }
}

function roots() {
  return rootsText.split("\n").map((s) => s.trim()).filter(Boolean);
}

async function refreshAll() {
  await Promise.all([refreshTools(), refreshResources(), refreshPrompts()]);
  showServer();
}

const capable = (name) => Boolean(state.info && state.info.capabilities && state.info.capabilities[name]);

// -- tools -------------------------------------------------------------------------------------------

async function refreshTools() {
  const list = $("tool-list");
  if (!capable("tools")) {
    state.tools = [];
    clear(list).append(h("li", { class: "hint" }, "This server has no tools."));
    $("tools-count").textContent = "";
    return;
  }
  try {
    state.tools = await api.listAll("tools/list", "tools");
  } catch (error) {
    clear(list).append(h("li", {}, renderError(error)));
    return;
  }
  $("tools-count").textContent = String(state.tools.length);
  clear(list);
  for (const tool of state.tools) {
    list.append(h("li", {}, h("button", { type: "button", class: "item tool-item", dataset: { name: tool.name }, onclick: () => showTool(tool) },
      h("b", {}, tool.title || tool.name), tool.title ? h("small", {}, tool.name) : null,
      uiResourceOf(tool) ? h("span", { class: "badge" }, "app") : null,
      appMayCall(tool) && !modelMayCall(tool) ? h("span", { class: "badge app-only" }, "app only") : null)));
  }
  const shown = $("tool-detail").dataset.tool;
  const again = state.tools.find((t) => t.name === shown);
  if (again) showTool(again);
}

function showTool(tool) {
  for (const button of document.querySelectorAll(".tool-item")) button.classList.toggle("selected", button.dataset.name === tool.name);
  const detail = clear($("tool-detail"));
  detail.dataset.tool = tool.name;
  const form = schemaForm(tool.inputSchema || {});
  const output = h("div", { class: "output", id: "tool-output" });
  const problem = h("p", { class: "problem" });
  const call = h("button", { type: "button", class: "primary", id: "call-tool" }, "Call");
  const cancel = h("button", { type: "button", id: "cancel-tool", hidden: true }, "Cancel");
  const annotations = tool.annotations ? Object.entries(tool.annotations).filter(([k]) => k.endsWith("Hint")).map(([k, v]) => h("span", { class: "badge" }, `${k.replace(/Hint$/, "")}: ${v}`)) : [];
  detail.append(
    h("h2", {}, tool.title || tool.name), h("code", { class: "name" }, tool.name), ...annotations,
    tool.description ? h("p", { class: "description" }, tool.description) : null,
    form.element, problem, h("div", { class: "buttons" }, call, cancel), output);
  call.addEventListener("click", () => callTool(tool, form, { call, cancel, output, problem }));
}

async function callTool(tool, form, ui) {
  let args;
  try {
    args = form.read();
  } catch (error) {
    ui.problem.textContent = error.message;
    return;
  }
  ui.problem.textContent = "";
  const callId = `call-${++state.calls}`;
  const bar = h("progress", { dataset: { call: callId } });
  clear(ui.output).append(bar);
  for (const app of state.apps) app.dispose();
  state.apps = [];
  ui.call.disabled = true;
  ui.cancel.hidden = false;
  ui.cancel.onclick = () => api.op("cancel", { callId });
  const uri = uiResourceOf(tool);
  // The app is fetched and shown while the tool runs; it gets the input once it has initialized.
  const app = uri ? openApp(tool, uri, ui.output).then((view) => (view?.setInput(args), view)) : null;
  try {
    const result = await api.request("tools/call", { name: tool.name, arguments: args }, callId);
    ui.output.append(renderToolResult(result));
    if (app) (await app)?.setResult(result);
  } catch (error) {
    ui.output.append(renderError(error));
    const view = app && (await app);
    if (view && view.initialized) view.post({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: error.message } });
  } finally {
    bar.remove();
    ui.call.disabled = false;
    ui.cancel.hidden = true;
  }
}

/** Fetch the tool's UI resource and show it; the AppView, or null if it cannot be shown. */
async function openApp(tool, uri, output) {
  let contents;
  try {
    const result = await api.request("resources/read", { uri });
    contents = (result.contents || []).find((c) => c.uri === uri) || (result.contents || [])[0];
  } catch (error) {
    output.prepend(h("div", { class: "problem" }, `could not read the app ${uri}: ${error.message}`));
    return null;
  }
  if (!contents) return null;
  const view = new AppView({
    tool,
    resource: contents,
    host: {
      request: (method, params) => api.request(method, params),
      tool: (name) => state.tools.find((t) => t.name === name),
      log: (text, data) => logEvent("app", text, data),
      traffic: (dir, message) => logTraffic(dir, message),
    },
  });
  state.apps.push(view);
  output.prepend(view.element);
  return view;
}

// -- resources ---------------------------------------------------------------------------------------

async function refreshResources() {
  const list = clear($("resource-list"));
  const templates = clear($("template-list"));
  if (!capable("resources")) {
    list.append(h("li", { class: "hint" }, "This server has no resources."));
    $("resources-count").textContent = "";
    return;
  }
  try {
    const [resources, found] = await Promise.all([
      api.listAll("resources/list", "resources"),
      api.listAll("resources/templates/list", "resourceTemplates"),
    ]);
    $("resources-count").textContent = String(resources.length + found.length);
    for (const resource of resources) {
      list.append(h("li", {}, h("button", { type: "button", class: "item resource-item", dataset: { uri: resource.uri }, onclick: () => showResource(resource) },
        h("b", {}, resource.title || resource.name || resource.uri), h("small", {}, resource.uri))));
    }
    for (const template of found) {
      templates.append(h("li", {}, h("button", { type: "button", class: "item template-item", dataset: { uri: template.uriTemplate }, onclick: () => showTemplate(template) },
        h("b", {}, template.title || template.name || template.uriTemplate), h("small", {}, template.uriTemplate))));
    }
  } catch (error) {
    list.append(h("li", {}, renderError(error)));
  }
}

function describeResource(detail, item, uri) {
  detail.append(h("h2", {}, item.title || item.name || uri), h("code", { class: "name" }, uri),
    item.mimeType ? h("span", { class: "badge" }, item.mimeType) : null,
    item.description ? h("p", { class: "description" }, item.description) : null);
}

async function read(uri, output) {
  clear(output).append(h("progress"));
  try {
    const result = await api.request("resources/read", { uri });
    clear(output).append(h("div", { class: "result" }, (result.contents || []).map(renderContents)));
  } catch (error) {
    clear(output).append(renderError(error));
  }
}

function showResource(resource) {
  const detail = clear($("resource-detail"));
  describeResource(detail, resource, resource.uri);
  const output = h("div", { class: "output", id: "resource-output" });
  detail.append(h("div", { class: "buttons" },
    h("button", { type: "button", class: "primary", id: "read-resource", onclick: () => read(resource.uri, output) }, "Read"),
    subscribeButton(() => resource.uri)), output);
  read(resource.uri, output);
}

/** resources/subscribe (handshake era, when the server offers it): updates show in Events. */
function subscribeButton(uri) {
  const offered = state.info && state.info.era === "handshake" && state.info.capabilities.resources && state.info.capabilities.resources.subscribe;
  if (!offered) return null;
  const button = h("button", { type: "button", id: "subscribe-resource" }, "Subscribe");
  button.addEventListener("click", async () => {
    const subscribed = button.dataset.subscribed === "true";
    try {
      await api.request(subscribed ? "resources/unsubscribe" : "resources/subscribe", { uri: uri() });
      button.dataset.subscribed = String(!subscribed);
      button.textContent = subscribed ? "Subscribe" : "Unsubscribe";
      logEvent("status", `${subscribed ? "unsubscribed from" : "subscribed to"} ${uri()}`);
    } catch (error) {
      logEvent("status", `subscription failed: ${error.message}`);
    }
  });
  return button;
}

function showTemplate(template) {
  const detail = clear($("resource-detail"));
  describeResource(detail, template, template.uriTemplate);
  const names = variables(template.uriTemplate);
  const inputs = {};
  const form = h("div", { class: "form" });
  for (const name of names) {
    inputs[name] = completingInput(name, () => ({ type: "ref/resource", uri: template.uriTemplate }), () => valuesOf(inputs));
    form.append(h("div", { class: "field", dataset: { field: name } }, h("label", { for: inputs[name].id }, name, h("span", { class: "required" }, " *")), inputs[name], inputs[name].list));
  }
  const uri = h("code", { id: "expanded-uri" }, expand(template.uriTemplate, {}));
  const update = () => { uri.textContent = expand(template.uriTemplate, valuesOf(inputs)); };
  form.addEventListener("input", update);
  const output = h("div", { class: "output", id: "resource-output" });
  detail.append(form, h("p", {}, "URI: ", uri), h("div", { class: "buttons" },
    h("button", { type: "button", class: "primary", id: "read-resource", onclick: () => { update(); read(uri.textContent, output); } }, "Read"),
    subscribeButton(() => { update(); return uri.textContent; })), output);
}

function valuesOf(inputs) {
  return Object.fromEntries(Object.entries(inputs).filter(([, input]) => input.value !== "").map(([name, input]) => [name, input.value]));
}

/** A text input whose datalist fills from completion/complete as the user types. */
function completingInput(name, ref, context) {
  const id = `c-${Math.random().toString(36).slice(2)}`;
  const list = h("datalist", { id: `${id}-list` });
  const input = h("input", { id, name, list: list.id, autocomplete: "off" });
  Object.defineProperty(input, "list", { value: list }); // to place it; the DOM's own is read-only
  let timer;
  input.addEventListener("input", () => {
    if (!capable("completions")) return;
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const others = context();
      delete others[name];
      try {
        const params = { ref: ref(), argument: { name, value: input.value } };
        if (Object.keys(others).length) params.context = { arguments: others };
        const result = await api.request("completion/complete", params);
        clear(list).append(...((result.completion && result.completion.values) || []).map((v) => h("option", { value: v })));
        list.dataset.filled = String(list.childElementCount);
      } catch (error) {
        logEvent("completion", `completion failed: ${error.message}`);
      }
    }, 150);
  });
  return input;
}

// -- prompts -----------------------------------------------------------------------------------------

async function refreshPrompts() {
  const list = clear($("prompt-list"));
  if (!capable("prompts")) {
    list.append(h("li", { class: "hint" }, "This server has no prompts."));
    $("prompts-count").textContent = "";
    return;
  }
  try {
    const prompts = await api.listAll("prompts/list", "prompts");
    $("prompts-count").textContent = String(prompts.length);
    for (const prompt of prompts) {
      list.append(h("li", {}, h("button", { type: "button", class: "item prompt-item", dataset: { name: prompt.name }, onclick: () => showPrompt(prompt) },
        h("b", {}, prompt.title || prompt.name), prompt.title ? h("small", {}, prompt.name) : null)));
    }
  } catch (error) {
    list.append(h("li", {}, renderError(error)));
  }
}

function showPrompt(prompt) {
  const detail = clear($("prompt-detail"));
  detail.append(h("h2", {}, prompt.title || prompt.name), h("code", { class: "name" }, prompt.name),
    prompt.description ? h("p", { class: "description" }, prompt.description) : null);
  const inputs = {};
  const form = h("div", { class: "form" });
  for (const argument of prompt.arguments || []) {
    const input = completingInput(argument.name, () => ({ type: "ref/prompt", name: prompt.name }), () => valuesOf(inputs));
    inputs[argument.name] = input;
    form.append(h("div", { class: "field", dataset: { field: argument.name } },
      h("label", { for: input.id }, argument.title || argument.name, argument.required ? h("span", { class: "required" }, " *") : null),
      input, input.list, argument.description ? h("small", { class: "field-hint" }, argument.description) : null));
  }
  const output = h("div", { class: "output", id: "prompt-output" });
  const problem = h("p", { class: "problem" });
  const get = async () => {
    const missing = (prompt.arguments || []).filter((a) => a.required && !inputs[a.name].value);
    if (missing.length) {
      problem.textContent = `${missing.map((a) => a.name).join(", ")} required`;
      return;
    }
    problem.textContent = "";
    clear(output).append(h("progress"));
    try {
      clear(output).append(renderPrompt(await api.request("prompts/get", { name: prompt.name, arguments: valuesOf(inputs) })));
    } catch (error) {
      clear(output).append(renderError(error));
    }
  };
  detail.append(form, problem, h("div", { class: "buttons" }, h("button", { type: "button", class: "primary", id: "get-prompt", onclick: get }, "Get")), output);
}

// -- the server tab ----------------------------------------------------------------------------------

function showServer() {
  const detail = clear($("server-detail"));
  const info = state.info;
  if (!info) return;
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
  detail.append(
    h("h2", {}, info.serverInfo ? `${info.serverInfo.title || info.serverInfo.name} ${info.serverInfo.version || ""}` : "Server"),
    h("p", {}, `Protocol ${info.protocolVersion} (${info.era} era)`),
    info.instructions ? h("p", { class: "description" }, info.instructions) : null,
    capable("logging") ? h("p", {}, h("label", { for: "log-level" }, "Log level "), level) : null,
    h("h3", {}, "Capabilities"), jsonBlock(info.capabilities),
    h("h3", {}, "Roots offered to the server (one URI a line)"),
    h("textarea", { id: "roots", rows: 3 }, rootsText),
    h("div", { class: "buttons" }, h("button", { type: "button", id: "apply-roots", onclick: applyRoots }, "Apply roots")));
  $("roots").addEventListener("input", (e) => { rootsText = e.target.value; });
}

async function applyRoots() {
  try {
    await api.op("setRoots", { roots: roots() });
    logEvent("status", `roots: ${roots().join(", ") || "(none)"}`);
  } catch (error) {
    logEvent("status", `roots not set: ${error.message}`);
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

setupTabs();
setupBar();
setupClearButtons();
api.start();
