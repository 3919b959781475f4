// What the server asks of the user: elicitation (a form, or a URL to visit) and sampling (the
// inspector plays the model: a person types the reply). One question shows at a time, in a modal.

import { clear, h } from "./dom.js";
import { schemaForm } from "./forms.js";
import { renderBlock } from "./content.js";

const queue = [];
let current = null;

export function ask(api, question) {
  queue.push(question);
  if (!current) next(api);
}

export function closed(api, key) {
  const index = queue.findIndex((q) => q.key === key);
  if (index >= 0) queue.splice(index, 1);
  if (current && current.key === key) {
    document.getElementById("question").close();
    current = null;
    next(api);
  }
}

function next(api) {
  const dialog = document.getElementById("question");
  current = queue.shift() || null;
  if (!current) return;
  const question = current;
  const reply = async (answer) => {
    try {
      await api.op("answer", { key: question.key, ...answer });
    } catch (error) {
      // the question was withdrawn meanwhile (the server moved on): nothing to do
    }
    if (current === question) {
      dialog.close();
      current = null;
      next(api);
    }
  };
  clear(dialog);
  dialog.dataset.method = question.method;
  dialog.append(question.method === "sampling/createMessage" ? sampling(question.params, reply) : elicitation(question.params, reply));
  dialog.showModal();
}

function elicitation(params, reply) {
  const buttons = (accept) => h("div", { class: "buttons" },
    h("button", { type: "button", class: "primary", id: "elicit-accept", onclick: accept }, "Accept"),
    h("button", { type: "button", id: "elicit-decline", onclick: () => reply({ result: { action: "decline" } }) }, "Decline"),
    h("button", { type: "button", id: "elicit-cancel", onclick: () => reply({ result: { action: "cancel" } }) }, "Cancel"));
  const head = [h("h2", {}, "The server asks"), h("p", { class: "message" }, params.message || "")];
  if (params.mode === "url") {
    // Only web addresses are offered: a javascript: or data: URL from a server must not run here.
    const url = String(params.url || "");
    const safe = /^https?:\/\//i.test(url);
    const shown = safe ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, url) : h("code", {}, url);
    return h("div", { class: "question elicitation" }, ...head, h("p", {}, "It wants you to visit: ", shown),
      safe ? null : h("p", { class: "problem" }, "Not a web address: it will not be opened."),
      buttons(() => {
        if (safe) window.open(url, "_blank", "noopener,noreferrer");
        reply({ result: { action: safe ? "accept" : "decline" } });
      }));
  }
  const form = schemaForm(params.requestedSchema || {});
  const problem = h("p", { class: "problem" });
  return h("div", { class: "question elicitation" }, ...head, form.element, problem, buttons(() => {
    try {
      reply({ result: { action: "accept", content: form.read() } });
    } catch (error) {
      problem.textContent = error.message;
    }
  }));
}

function sampling(params, reply) {
  const text = h("textarea", { id: "sampling-text", rows: 4, placeholder: "The model's reply" });
  const model = h("input", { id: "sampling-model", value: "inspector" });
  const transcript = h("div", { class: "transcript" }, (params.messages || []).map((m) =>
    h("div", { class: "message" }, h("span", { class: "badge" }, m.role), Array.isArray(m.content) ? m.content.map(renderBlock) : renderBlock(m.content))));
  return h("div", { class: "question sampling" },
    h("h2", {}, "The server asks the model"),
    params.systemPrompt ? h("p", {}, h("b", {}, "System: "), params.systemPrompt) : null,
    transcript,
    h("p", { class: "hint" }, `maxTokens: ${params.maxTokens ?? "-"}`),
    h("label", { for: "sampling-text" }, "Reply as the model"), text,
    h("label", { for: "sampling-model" }, "Model name"), model,
    h("div", { class: "buttons" },
      h("button", { type: "button", class: "primary", id: "sampling-send", onclick: () => reply({
        result: { role: "assistant", content: { type: "text", text: text.value }, model: model.value || "inspector", stopReason: "endTurn" },
      }) }, "Send"),
      h("button", { type: "button", id: "sampling-reject", onclick: () => reply({ error: { code: -1, message: "the user rejected the sampling request" } }) }, "Reject")));
}
