// Building DOM without innerHTML: every text a server sends ends up in textContent.

/** h("div", {class: "x", onclick: fn}, child, "text", ...) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Append *children* to *el*, skipping null, undefined and false (which append() would write out
 * as the text "null"): an optional part of a view is written `cond ? h(...) : null`. */
export function put(el, ...children) {
  el.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}

/** A <pre> holding pretty JSON. */
export function jsonBlock(value, cls = "json") {
  return h("pre", { class: cls }, json(value));
}
