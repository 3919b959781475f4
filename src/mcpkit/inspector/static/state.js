// What the page's modules share: its state, its line to the backend, and small lookups.

import { Api } from "./api.js";

export const $ = (id) => document.getElementById(id);

export const state = {
  dev: null, // the dev file's label, if mcpkit dev was given one
  info: null, // the connected server's status event (serverInfo, capabilities, era...)
  tools: [],
  target: null,
  version: "auto",
  calls: 0,
  apps: [],
  logLevel: "info",
  rootsText: "", // the roots offered to the server, one URI a line (Server tab)
  listen: { tools: false, prompts: false, resources: false, uris: [] }, // 2026-07-28 subscriptions/listen
};

const handlers = { onEvent: () => {} };

/** Where the backend's events go (main.js sets it). */
export function onEvents(fn) {
  handlers.onEvent = fn;
}

export const api = new Api(new URLSearchParams(location.search).get("token") || "", (event) => handlers.onEvent(event));

export const capable = (name) => Boolean(state.info && state.info.capabilities && state.info.capabilities[name]);

/** The per-request timeout in seconds from the connection settings (0: none). */
export function requestTimeout() {
  const value = Number(($("opt-timeout") || {}).value);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Any MCP request, with the page's timeout. */
export function request(method, params = {}, callId = undefined) {
  return api.op("request", { method, params, callId, timeout: requestTimeout() });
}

/** Every item of a paginated list. */
export async function listAll(method, key) {
  const items = [];
  let cursor;
  for (let page = 0; page < 100; page++) {
    const result = await request(method, cursor ? { cursor } : {});
    items.push(...(result[key] || []));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return items;
}
