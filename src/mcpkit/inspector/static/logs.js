// The sidebar: events (notifications, logs, progress, stderr, reloads) and the raw JSON-RPC traffic.

import { clear, h, json } from "./dom.js";

const MAX_ROWS = 2000;

function append(list, row) {
  list.append(row);
  while (list.childElementCount > MAX_ROWS) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

function clock(time) {
  const date = time ? new Date(time * 1000) : new Date();
  return date.toTimeString().slice(0, 8);
}

/** A row whose details (JSON) unfold on click. */
function row(cls, time, summary, details, dataset = {}) {
  const body = details === undefined ? null : h("pre", { class: "json", hidden: true }, typeof details === "string" ? details : json(details));
  const line = h("div", { class: "summary" }, h("time", {}, clock(time)), " ", summary);
  const item = h("li", { class: cls, dataset }, line, body);
  if (body) line.addEventListener("click", () => { body.hidden = !body.hidden; });
  return item;
}

export function logEvent(kind, summary, details, time) {
  const classes = kind.split(" ").map((k) => `kind-${k}`).join(" ");
  append(document.getElementById("events"), row(`event ${classes}`, time, summary, details, { kind: kind.split(" ")[0] }));
}

/** What a JSON-RPC message is, in a few words. */
function describe(message) {
  if (typeof message !== "object" || message === null) return String(message).slice(0, 80);
  if (Array.isArray(message)) return `batch of ${message.length}`;
  const id = message.id !== undefined && message.id !== null ? `#${message.id} ` : "";
  if (message.method) {
    const name = message.params && (message.params.name || message.params.uri);
    return `${id}${message.method}${name ? ` ${name}` : ""}`;
  }
  if (message.error) return `${id}error ${message.error.code}: ${message.error.message}`;
  return `${id}result`;
}

export function logTraffic(direction, message, time) {
  const arrow = { out: "→", in: "←" }[direction] || direction;
  const method = message && typeof message === "object" ? message.method || "" : "";
  append(document.getElementById("traffic"),
    row(`traffic dir-${direction.replace(/[^a-z]/g, "")}`, time, h("span", {}, h("b", {}, arrow), " ", describe(message)), message, { dir: direction, method }));
}

export function setupClearButtons() {
  document.getElementById("clear-events").addEventListener("click", () => clear(document.getElementById("events")));
  document.getElementById("clear-traffic").addEventListener("click", () => clear(document.getElementById("traffic")));
}
