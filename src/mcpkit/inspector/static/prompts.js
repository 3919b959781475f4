// The Prompts tab: the list, one field per argument (with completion), and the messages of prompts/get.

import { completingInput, valuesOf } from "./completion.js";
import { renderError, renderPrompt } from "./content.js";
import { clear, h, put } from "./dom.js";
import { $, capable, listAll, request } from "./state.js";

export async function refreshPrompts() {
  const list = clear($("prompt-list"));
  if (!capable("prompts")) {
    list.append(h("li", { class: "hint" }, "This server has no prompts."));
    $("prompts-count").textContent = "";
    return;
  }
  try {
    const prompts = await listAll("prompts/list", "prompts");
    $("prompts-count").textContent = String(prompts.length);
    for (const prompt of prompts) {
      list.append(h("li", {}, h("button", { type: "button", class: "item prompt-item", dataset: { name: prompt.name }, onclick: () => showPrompt(prompt) },
        h("b", {}, prompt.title || prompt.name), prompt.title ? h("small", {}, prompt.name) : null,
        prompt.description ? h("span", { class: "item-description", title: prompt.description }, prompt.description) : null)));
    }
  } catch (error) {
    list.append(h("li", {}, renderError(error)));
  }
}

function showPrompt(prompt) {
  const detail = clear($("prompt-detail"));
  put(detail, h("h2", {}, prompt.title || prompt.name), h("code", { class: "name" }, prompt.name),
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
      clear(output).append(renderPrompt(await request("prompts/get", { name: prompt.name, arguments: valuesOf(inputs) })));
    } catch (error) {
      clear(output).append(renderError(error));
    }
  };
  put(detail, form, problem, h("div", { class: "buttons" }, h("button", { type: "button", class: "primary", id: "get-prompt", onclick: get }, "Get")), output);
}
