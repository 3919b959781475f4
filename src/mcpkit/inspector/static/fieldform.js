// A tool's form from the field tree the backend reads from its inputSchema (mcpkit._schema_view:
// references resolved, X | null read as an optional X, unions, nested objects, arrays).
//
// Nested objects are fieldsets, arrays a list of items with Add and Remove, enums a select, a
// union a select of its alternatives with the chosen one's fields; what the tree cannot describe
// (a recursive type, "any") is a JSON text area. read() checks every field before anything is
// sent and throws one message naming each problem by its path. "Edit as JSON" swaps the form for
// the arguments as JSON, and back (the form is rebuilt with the JSON's values).

import { clear, h, json } from "./dom.js";

const uid = () => `f-${Math.random().toString(36).slice(2)}`;
const label = (f) => f.title || f.name || f.type_name || "item";
const hasValue = (v) => v !== undefined;

/** {element, read() -> value or undefined (unset); pushes "path: problem" strings on errors}. */
function editor(f, initial) {
  const start = hasValue(initial) ? initial : f.default;
  const where = f.path || label(f);
  switch (f.kind) {
    case "object":
      return objectEditor(f, start);
    case "array":
      return arrayEditor(f, start);
    case "enum":
      return choiceEditor(f, f.enum, f.enum.map(String), start);
    case "const":
      return { element: h("code", { class: "const" }, json(f.const)), read: () => f.const };
    case "union":
      if (f.options.every((o) => o.kind === "const")) return choiceEditor(f, f.options.map((o) => o.const), f.options.map((o) => o.title || String(o.const)), start);
      return unionEditor(f, start);
    case "boolean":
      return booleanEditor(f, start);
    case "integer":
    case "number":
      return numberEditor(f, start, where);
    case "string":
      return stringEditor(f, start, where);
    default:
      return jsonEditor(f, start, where);
  }
}

function choiceEditor(f, values, names, start) {
  const input = h("select", { id: uid(), name: f.name || "" },
    f.required && hasValue(f.default) ? null : h("option", { value: "" }, f.required ? "(choose)" : "(unset)"),
    values.map((value, i) => h("option", { value: JSON.stringify(value) }, names[i])));
  if (hasValue(start)) input.value = JSON.stringify(start);
  return { element: input, input, read: () => (input.value === "" ? undefined : JSON.parse(input.value)) };
}

function booleanEditor(f, start) {
  if (f.required) {
    const input = h("input", { id: uid(), name: f.name || "", type: "checkbox" });
    input.checked = start === true;
    return { element: input, input, read: () => input.checked };
  }
  const input = h("select", { id: uid(), name: f.name || "" }, h("option", { value: "" }, "(unset)"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
  if (typeof start === "boolean") input.value = String(start);
  return { element: input, input, read: () => (input.value === "" ? undefined : input.value === "true") };
}

function numberEditor(f, start, where) {
  const input = h("input", { id: uid(), name: f.name || "", type: "number", step: f.kind === "integer" ? "1" : "any", min: f.minimum, max: f.maximum });
  if (typeof start === "number") input.value = String(start);
  return {
    element: input, input,
    read: (errors) => {
      if (input.value.trim() === "") return undefined;
      const value = Number(input.value);
      const problem = !Number.isFinite(value) ? "not a number"
        : f.kind === "integer" && !Number.isInteger(value) ? "not an integer"
        : f.minimum !== undefined && value < f.minimum ? `must be ≥ ${f.minimum}`
        : f.maximum !== undefined && value > f.maximum ? `must be ≤ ${f.maximum}`
        : f.exclusiveMinimum !== undefined && value <= f.exclusiveMinimum ? `must be > ${f.exclusiveMinimum}`
        : f.exclusiveMaximum !== undefined && value >= f.exclusiveMaximum ? `must be < ${f.exclusiveMaximum}`
        : f.multipleOf && Math.abs(value / f.multipleOf - Math.round(value / f.multipleOf)) > 1e-9 ? `must be a multiple of ${f.multipleOf}` : null;
      if (problem) errors.push(`${where}: ${problem}`);
      return value;
    },
  };
}

function stringEditor(f, start, where) {
  const type = { date: "date", "date-time": "datetime-local", email: "email", uri: "url" }[f.format] || "text";
  const input = h("input", { id: uid(), name: f.name || "", type, placeholder: f.format || "" });
  if (typeof start === "string") input.value = start;
  return {
    element: input, input,
    read: (errors) => {
      if (input.value === "") return undefined;
      const value = input.value;
      const problem = f.minLength !== undefined && value.length < f.minLength ? `at least ${f.minLength} characters`
        : f.maxLength !== undefined && value.length > f.maxLength ? `at most ${f.maxLength} characters`
        : f.pattern && !safeMatch(f.pattern, value) ? `must match ${f.pattern}`
        : type !== "text" && !input.checkValidity() ? `not a valid ${f.format}` : null;
      if (problem) errors.push(`${where}: ${problem}`);
      return value;
    },
  };
}

function safeMatch(pattern, value) {
  try {
    return new RegExp(pattern, "u").test(value);
  } catch {
    return true; // a pattern this browser cannot read is the server's to check
  }
}

function jsonEditor(f, start, where) {
  const input = h("textarea", { id: uid(), name: f.name || "", rows: 3, class: "json-input", placeholder: f.kind === "cycle" ? `JSON (${f.type_name || "nested"})` : "JSON" });
  if (hasValue(start)) input.value = json(start);
  return {
    element: input, input,
    read: (errors) => {
      if (input.value.trim() === "") return undefined;
      try {
        return JSON.parse(input.value);
      } catch (error) {
        errors.push(`${where}: not valid JSON (${error.message})`);
        return undefined;
      }
    },
  };
}

/** One named field: label, editor, description; read() reports a missing required value. */
function row(f, initial) {
  const inner = editor(f, initial);
  const required = f.required && !f.nullable;
  const element = h("div", { class: `field kind-${f.kind}`, dataset: { field: f.name, path: f.path } },
    f.kind === "object" ? null : h("label", { for: inner.input ? inner.input.id : null }, label(f), required ? h("span", { class: "required", title: "required" }, " *") : null),
    inner.element, f.description && f.kind !== "object" ? h("small", { class: "field-hint" }, f.description) : null);
  return {
    element,
    read(errors) {
      const value = inner.read(errors);
      if (required && value === undefined && f.kind !== "object") errors.push(`${f.path || f.name} is required`);
      return value;
    },
  };
}

function objectEditor(f, start) {
  const values = start && typeof start === "object" && !Array.isArray(start) ? start : {};
  // Paths are the value's own (order.lines[0].item), not the schema's (order.lines[].item).
  const rows = (f.fields || []).map((child) => [child.name, row({ ...child, path: f.path ? `${f.path}.${child.name}` : child.name }, values[child.name])]);
  const extra = f.additional ? jsonEditor({ ...f.additional, name: "*" }, undefined, `${f.path || "arguments"} (more keys)`) : null;
  const body = [...rows.map(([, r]) => r.element), extra ? h("div", { class: "field" }, h("label", {}, "More keys (JSON object)"), extra.element) : null];
  const element = f.path ? h("fieldset", { class: "nested" }, h("legend", {}, f.name || label(f), f.type_name && f.name ? h("small", {}, ` ${f.type_name}`) : null, f.required ? h("span", { class: "required" }, " *") : null), f.description ? h("small", { class: "field-hint" }, f.description) : null, body)
    : h("div", { class: "form-fields" }, body);
  return {
    element,
    read(errors) {
      const value = {};
      for (const [name, r] of rows) {
        const got = r.read(errors);
        if (got !== undefined) value[name] = got;
      }
      if (extra) Object.assign(value, extra.read(errors) || {});
      // An optional object left empty is not sent.
      return Object.keys(value).length || (f.required && !f.nullable) || !f.path ? value : undefined;
    },
  };
}

function arrayEditor(f, start) {
  const item = f.items || { kind: "any", path: `${f.path}[]` };
  if (item.kind === "enum") { // a set of choices: checkboxes
    const chosen = Array.isArray(start) ? start : [];
    const boxes = item.enum.map((value) => {
      const box = h("input", { type: "checkbox", value: JSON.stringify(value) });
      box.checked = chosen.includes(value);
      return { box, element: h("label", { class: "choice" }, box, ` ${value}`) };
    });
    return { element: h("div", { class: "choices" }, boxes.map((b) => b.element)), read: () => boxes.filter((b) => b.box.checked).map((b) => JSON.parse(b.box.value)) };
  }
  const list = h("ol", { class: "array-items" });
  const entries = [];
  const add = (value) => {
    const entry = row({ ...item, name: undefined, title: item.title || item.type_name || "item", required: true, path: `${f.path}[${entries.length}]` }, value);
    const li = h("li", {}, entry.element, h("button", { type: "button", class: "small remove-item", onclick: () => { entries.splice(entries.indexOf(entry), 1); li.remove(); } }, "Remove"));
    entries.push(entry);
    list.append(li);
  };
  for (const value of Array.isArray(start) ? start : []) add(value);
  const element = h("div", { class: "array" }, list, h("button", { type: "button", class: "small add-item", onclick: () => add(undefined) }, "Add"));
  return {
    element,
    read(errors) {
      if (!entries.length && !f.required) return undefined;
      const values = entries.map((entry) => entry.read(errors));
      if (f.minItems !== undefined && values.length < f.minItems) errors.push(`${f.path}: at least ${f.minItems} items`);
      if (f.maxItems !== undefined && values.length > f.maxItems) errors.push(`${f.path}: at most ${f.maxItems} items`);
      return values;
    },
  };
}

function unionEditor(f, start) {
  const names = f.options.map((o, i) => o.type_name || o.title || (o.kind === "array" ? "list" : o.kind) || `option ${i + 1}`);
  const pick = h("select", { id: uid(), class: "union-pick" }, f.required ? null : h("option", { value: "" }, "(unset)"), names.map((n, i) => h("option", { value: String(i) }, n)));
  const holder = h("div", { class: "union-body" });
  let current = null;
  const show = (value) => {
    clear(holder);
    current = pick.value === "" ? null : editor({ ...f.options[Number(pick.value)], name: f.name, path: f.path, required: true }, value);
    if (current) holder.append(current.element);
  };
  pick.addEventListener("change", () => show(undefined));
  if (hasValue(start) || f.required) pick.value = "0";
  show(start);
  return { element: h("div", { class: "union" }, pick, holder), input: pick, read: (errors) => (current ? current.read(errors) : undefined) };
}

/** The tool's form: {element, read() -> arguments} (read throws one message for every problem). */
export function treeForm(tree) {
  const box = h("div", { class: "form tree-form" });
  const toggle = h("button", { type: "button", class: "small", id: "json-toggle" }, "Edit as JSON");
  const text = h("textarea", { id: "json-arguments", rows: 8, class: "json-input" });
  let form = objectEditor({ ...tree, path: "" }, undefined);
  let asJson = false;
  const readForm = () => {
    const errors = [];
    const value = form.read(errors);
    if (errors.length) throw new Error(errors.join("; "));
    return value || {};
  };
  const render = () => {
    clear(box).append(h("div", { class: "form-head" }, toggle), asJson ? text : form.element);
    if (!asJson && !(tree.fields || []).length && !tree.additional) box.append(h("p", { class: "hint" }, "No arguments."));
  };
  toggle.addEventListener("click", () => {
    if (asJson) {
      let value;
      try {
        value = JSON.parse(text.value || "{}");
      } catch (error) {
        toggle.dataset.problem = `not valid JSON (${error.message})`;
        return;
      }
      form = objectEditor({ ...tree, path: "" }, value);
    } else {
      const errors = [];
      text.value = json(form.read(errors) || {});
    }
    asJson = !asJson;
    toggle.textContent = asJson ? "Edit as form" : "Edit as JSON";
    render();
  });
  render();
  return {
    element: box,
    read() {
      if (!asJson) return readForm();
      try {
        const value = JSON.parse(text.value || "{}");
        if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("the arguments must be a JSON object");
        return value;
      } catch (error) {
        throw new Error(`arguments: ${error.message}`);
      }
    },
  };
}
