// The Tools tab: the list (with descriptions), a form per tool, calling it, and its MCP App.

import { AppView, appMayCall, modelMayCall, uiResourceOf } from "./apps.js";
import { renderError, renderToolResult } from "./content.js";
import { clear, h, put } from "./dom.js";
import { treeForm } from "./fieldform.js";
import { schemaForm } from "./forms.js";
import { logEvent, logTraffic } from "./logs.js";
import { $, api, capable, listAll, request, state } from "./state.js";

export async function refreshTools() {
  const list = $("tool-list");
  if (!capable("tools")) {
    state.tools = [];
    clear(list).append(h("li", { class: "hint" }, "This server has no tools."));
    $("tools-count").textContent = "";
    return;
  }
  try {
    state.tools = await listAll("tools/list", "tools");
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
      appMayCall(tool) && !modelMayCall(tool) ? h("span", { class: "badge app-only" }, "app only") : null,
      tool.description ? h("span", { class: "item-description", title: tool.description }, tool.description) : null)));
  }
  const shown = $("tool-detail").dataset.tool;
  const again = state.tools.find((t) => t.name === shown);
  if (again) showTool(again);
  else if (shown) resetToolDetail();
}

/** The tool panel as it is before any tool is picked. */
export function resetToolDetail() {
  for (const app of state.apps) app.dispose();
  state.apps = [];
  const detail = clear($("tool-detail"));
  delete detail.dataset.tool;
  detail.append(h("p", { class: "hint" }, "Pick a tool."));
}

function showTool(tool) {
  for (const button of document.querySelectorAll(".tool-item")) button.classList.toggle("selected", button.dataset.name === tool.name);
  const detail = clear($("tool-detail"));
  detail.dataset.tool = tool.name;
  // The backend reads the schema into a tree of fields (references resolved); a flat form otherwise.
  const form = tool._mcpkitForm ? treeForm(tool._mcpkitForm) : schemaForm(tool.inputSchema || {});
  const output = h("div", { class: "output", id: "tool-output" });
  const problem = h("p", { class: "problem" });
  const call = h("button", { type: "button", class: "primary", id: "call-tool" }, "Call");
  const cancel = h("button", { type: "button", id: "cancel-tool", hidden: true }, "Cancel");
  const annotations = tool.annotations ? Object.entries(tool.annotations).filter(([k, v]) => k.endsWith("Hint") && v != null).map(([k, v]) => h("span", { class: "badge" }, `${k.replace(/Hint$/, "")}: ${v}`)) : [];
  put(detail,
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
    const result = await request("tools/call", { name: tool.name, arguments: args }, callId);
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
    const result = await request("resources/read", { uri });
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
      request: (method, params) => request(method, params),
      tool: (name) => state.tools.find((t) => t.name === name),
      log: (text, data) => logEvent("app", text, data),
      traffic: (dir, message) => logTraffic(dir, message),
    },
  });
  state.apps.push(view);
  output.prepend(view.element);
  return view;
}
