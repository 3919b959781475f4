// Showing what servers return: content blocks, tool results, resource contents, prompt messages.

import { h, jsonBlock } from "./dom.js";

function dataUrl(mimeType, data) {
  return `data:${mimeType || "application/octet-stream"};base64,${data}`;
}

/** One resource contents entry (of resources/read, or embedded in a result). */
export function renderContents(item) {
  const head = h("div", { class: "contents-head" }, h("code", {}, item.uri || ""), item.mimeType ? h("span", { class: "badge" }, item.mimeType) : null);
  let body;
  if (typeof item.text === "string") body = h("pre", { class: "text" }, item.text);
  else if (typeof item.blob === "string") {
    body = (item.mimeType || "").startsWith("image/")
      ? h("img", { src: dataUrl(item.mimeType, item.blob), alt: item.uri || "image" })
      : h("p", { class: "hint" }, `binary, ${Math.floor((item.blob.length * 3) / 4)} bytes`);
  }
  return h("div", { class: "contents" }, head, body);
}

/** One content block. */
export function renderBlock(block) {
  switch (block && block.type) {
    case "text":
      return h("pre", { class: "text block" }, block.text);
    case "image":
      return h("img", { class: "block", src: dataUrl(block.mimeType, block.data), alt: "image from the server" });
    case "audio":
      return h("audio", { class: "block", controls: true, src: dataUrl(block.mimeType, block.data) });
    case "resource_link":
      return h("div", { class: "block link" }, "resource link: ", h("code", {}, block.uri), block.name ? ` (${block.name})` : "");
    case "resource":
      return h("div", { class: "block" }, renderContents(block.resource || {}));
    default:
      return jsonBlock(block, "json block");
  }
}

/** A CallToolResult: its content, its structuredContent, and whether it is an error. */
export function renderToolResult(result) {
  const box = h("div", { class: `result${result.isError ? " is-error" : ""}` },
    h("div", { class: "result-head" }, result.isError ? "Tool error" : "Result"));
  for (const block of result.content || []) box.append(renderBlock(block));
  if (result.structuredContent !== undefined) {
    box.append(h("div", { class: "sub" }, "structuredContent"), jsonBlock(result.structuredContent, "json structured"));
  }
  return box;
}

/** A GetPromptResult. */
export function renderPrompt(result) {
  const box = h("div", { class: "result" }, result.description ? h("p", {}, result.description) : null);
  for (const message of result.messages || []) {
    box.append(h("div", { class: "message" }, h("span", { class: "badge" }, message.role), renderBlock(message.content)));
  }
  return box;
}

/** An error of an operation (a JSON-RPC error or the backend's own). */
export function renderError(error) {
  return h("div", { class: "result is-error" },
    h("div", { class: "result-head" }, error.code !== undefined ? `Error ${error.code}` : "Error"),
    h("pre", { class: "text" }, error.message),
    error.data !== undefined ? jsonBlock(error.data) : null);
}
