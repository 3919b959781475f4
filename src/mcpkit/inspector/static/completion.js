// Text inputs that ask the server for suggestions (completion/complete) as the user types.

import { clear, h } from "./dom.js";
import { logEvent } from "./logs.js";
import { capable, request } from "./state.js";

/** The non-empty values of a set of inputs, by name. */
export function valuesOf(inputs) {
  return Object.fromEntries(Object.entries(inputs).filter(([, input]) => input.value !== "").map(([name, input]) => [name, input.value]));
}

/** A text input whose datalist fills from completion/complete as the user types. */
export function completingInput(name, ref, context) {
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
        const result = await request("completion/complete", params);
        clear(list).append(...((result.completion && result.completion.values) || []).map((v) => h("option", { value: v })));
        list.dataset.filled = String(list.childElementCount);
      } catch (error) {
        logEvent("completion", `completion failed: ${error.message}`);
      }
    }, 150);
  });
  return input;
}
