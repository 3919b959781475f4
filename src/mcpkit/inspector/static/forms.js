// Forms made from JSON Schema: tool inputs (any schema) and elicitation requests (flat objects).
//
// Strings, numbers, integers and booleans get their own inputs, enums a select, arrays of enums a
// set of checkboxes; anything else (objects, arrays, unions) is a JSON textarea. Required fields are
// marked, defaults are filled in, and a field left empty is left out of the result.

import { h } from "./dom.js";

/** The schema of one property with a nullable union (`["string", "null"]`, anyOf with null) reduced. */
function simplify(schema) {
  if (!schema || typeof schema !== "object") return {};
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== "null");
    if (types.length === 1) return { ...schema, type: types[0] };
  }
  for (const key of ["anyOf", "oneOf"]) {
    const options = schema[key];
    if (!Array.isArray(options)) continue;
    if (options.every((o) => o && "const" in o)) {
      return { ...schema, enum: options.map((o) => o.const), enumNames: options.map((o) => o.title ?? String(o.const)) };
    }
    const rest = options.filter((o) => !(o && o.type === "null"));
    if (rest.length === 1) return { ...schema, ...rest[0], [key]: undefined };
  }
  return schema;
}

function enumOf(schema) {
  if (Array.isArray(schema.enum)) return { values: schema.enum, names: schema.enumNames || schema.enum.map(String) };
  return null;
}

/** One field: {element, read() -> {set: bool, value}} (throws with a message on bad input). */
function field(name, rawSchema, required) {
  const schema = simplify(rawSchema);
  const id = `f-${Math.random().toString(36).slice(2)}`;
  const label = h("label", { for: id }, schema.title || name, required ? h("span", { class: "required", title: "required" }, " *") : null);
  const hint = schema.description ? h("small", { class: "field-hint" }, schema.description) : null;
  const has = schema.default !== undefined;
  const choices = enumOf(schema);
  const items = schema.type === "array" && schema.items ? enumOf(simplify(schema.items)) : null;
  let input;
  let read;
  if (choices) {
    input = h("select", { id, name },
      required && has ? null : h("option", { value: "" }, required ? "(choose)" : "(unset)"),
      choices.values.map((value, i) => h("option", { value: JSON.stringify(value) }, choices.names[i])));
    if (has) input.value = JSON.stringify(schema.default);
    read = () => (input.value === "" ? { set: false } : { set: true, value: JSON.parse(input.value) });
  } else if (items) {
    const boxes = items.values.map((value, i) => {
      const box = h("input", { type: "checkbox", value: JSON.stringify(value) });
      if (has && Array.isArray(schema.default) && schema.default.includes(value)) box.checked = true;
      return { box, element: h("label", { class: "choice" }, box, ` ${items.names[i]}`) };
    });
    input = h("div", { id, class: "choices" }, boxes.map((b) => b.element));
    read = () => ({ set: true, value: boxes.filter((b) => b.box.checked).map((b) => JSON.parse(b.box.value)) });
  } else if (schema.type === "boolean") {
    if (required) {
      input = h("input", { id, name, type: "checkbox" });
      input.checked = schema.default === true;
      read = () => ({ set: true, value: input.checked });
    } else {
      input = h("select", { id, name }, h("option", { value: "" }, "(unset)"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
      if (has) input.value = String(schema.default);
      read = () => (input.value === "" ? { set: false } : { set: true, value: input.value === "true" });
    }
  } else if (schema.type === "number" || schema.type === "integer") {
    input = h("input", { id, name, type: "number", step: schema.type === "integer" ? "1" : "any", min: schema.minimum, max: schema.maximum });
    if (has) input.value = String(schema.default);
    read = () => {
      if (input.value.trim() === "") return { set: false };
      const value = Number(input.value);
      if (!Number.isFinite(value)) throw new Error(`${name}: not a number`);
      if (schema.type === "integer" && !Number.isInteger(value)) throw new Error(`${name}: not an integer`);
      return { set: true, value };
    };
  } else if (schema.type === "string") {
    const kind = { date: "date", "date-time": "datetime-local", email: "email", uri: "url" }[schema.format] || "text";
    input = h("input", { id, name, type: kind, minlength: schema.minLength, maxlength: schema.maxLength });
    if (has) input.value = String(schema.default);
    read = () => (input.value === "" ? { set: false } : { set: true, value: input.value });
  } else {
    input = h("textarea", { id, name, rows: 3, class: "json-input", placeholder: "JSON" });
    if (has) input.value = JSON.stringify(schema.default, null, 2);
    read = () => {
      if (input.value.trim() === "") return { set: false };
      try {
        return { set: true, value: JSON.parse(input.value) };
      } catch (error) {
        throw new Error(`${name}: not valid JSON (${error.message})`);
      }
    };
  }
  const element = h("div", { class: "field", dataset: { field: name } }, label, input, hint);
  return {
    element,
    input,
    read() {
      const result = read();
      if (required && !result.set) throw new Error(`${name} is required`);
      return result;
    },
  };
}

/** A form for an object schema: {element, fields, read() -> object}. */
export function schemaForm(schema) {
  const properties = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = Object.entries(properties).map(([name, sub]) => [name, field(name, sub, required.has(name))]);
  const element = h("div", { class: "form" }, fields.map(([, f]) => f.element));
  if (!fields.length) element.append(h("p", { class: "hint" }, "No arguments."));
  return {
    element,
    fields: Object.fromEntries(fields),
    read() {
      const value = {};
      for (const [name, f] of fields) {
        const result = f.read();
        if (result.set) value[name] = result.value;
      }
      return value;
    },
  };
}
