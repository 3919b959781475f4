// The Resources tab: fixed resources (read when picked), templates (a field per variable), and
// subscribing to a resource's updates in either era.

import { completingInput, valuesOf } from "./completion.js";
import { renderContents, renderError } from "./content.js";
import { clear, h, put } from "./dom.js";
import { applyListen } from "./listen.js";
import { logEvent } from "./logs.js";
import { $, capable, listAll, request, state } from "./state.js";
import { expand, variables } from "./uritemplate.js";

export async function refreshResources() {
  const list = clear($("resource-list"));
  const templates = clear($("template-list"));
  if (!capable("resources")) {
    list.append(h("li", { class: "hint" }, "This server has no resources."));
    $("resources-count").textContent = "";
    return;
  }
  try {
    const [resources, found] = await Promise.all([
      listAll("resources/list", "resources"),
      listAll("resources/templates/list", "resourceTemplates"),
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
  put(detail, h("h2", {}, item.title || item.name || uri), h("code", { class: "name" }, uri),
    item.mimeType ? h("span", { class: "badge" }, item.mimeType) : null,
    item.size != null ? h("span", { class: "badge" }, `${item.size} bytes`) : null,
    item.description ? h("p", { class: "description" }, item.description) : null);
}

async function read(uri, output) {
  clear(output).append(h("progress"));
  try {
    const result = await request("resources/read", { uri });
    clear(output).append(h("div", { class: "result" }, (result.contents || []).map(renderContents)));
  } catch (error) {
    clear(output).append(renderError(error));
  }
}

function showResource(resource) {
  const detail = clear($("resource-detail"));
  describeResource(detail, resource, resource.uri);
  const output = h("div", { class: "output", id: "resource-output" });
  put(detail, h("div", { class: "buttons" },
    h("button", { type: "button", class: "primary", id: "read-resource", onclick: () => read(resource.uri, output) }, "Read"),
    subscribeButton(() => resource.uri)), output);
  read(resource.uri, output);
}

/** Subscribe to a resource's updates when the server offers it: resources/subscribe in the
 * handshake era, the URI added to the page's subscriptions/listen in 2026-07-28. Updates show in Events. */
function subscribeButton(uri) {
  const resources = state.info && state.info.capabilities.resources;
  const stateless = Boolean(state.info && state.info.era === "stateless");
  // In 2026-07-28 the listen request's acknowledgement says whether the server took the URI, so
  // the button is offered whenever there are resources, `subscribe` declared or not.
  if (!resources || !(stateless || resources.subscribe)) return null;
  const button = h("button", { type: "button", id: "subscribe-resource" }, "Subscribe");
  button.addEventListener("click", async () => {
    const subscribed = button.dataset.subscribed === "true";
    const target = uri();
    try {
      if (stateless) {
        const others = state.listen.uris.filter((u) => u !== target);
        state.listen = { ...state.listen, uris: subscribed ? others : [...others, target] };
        const acknowledged = await applyListen();
        if (!subscribed && !(acknowledged.resourceSubscriptions || []).includes(target)) {
          throw new Error(`the server did not take ${target} (its acknowledgement leaves it out)`);
        }
      } else {
        await request(subscribed ? "resources/unsubscribe" : "resources/subscribe", { uri: target });
      }
      button.dataset.subscribed = String(!subscribed);
      button.textContent = subscribed ? "Subscribe" : "Unsubscribe";
      logEvent("status", `${subscribed ? "unsubscribed from" : "subscribed to"} ${target}`);
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
  put(detail, form, h("p", {}, "URI: ", uri), h("div", { class: "buttons" },
    h("button", { type: "button", class: "primary", id: "read-resource", onclick: () => { update(); read(uri.textContent, output); } }, "Read"),
    subscribeButton(() => { update(); return uri.textContent; })), output);
}
