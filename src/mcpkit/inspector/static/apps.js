// MCP Apps (the io.modelcontextprotocol/ui extension, SEP-1865): the inspector as a host.
//
// A tool whose _meta.ui.resourceUri names a ui:// resource is shown with that resource's HTML in a
// sandboxed iframe (scripts only: an opaque origin, no access to this page), under a Content
// Security Policy built from the resource's _meta.ui.csp (the spec's restrictive default without
// one). The app speaks JSON-RPC over postMessage: ui/initialize, then the host sends the tool's
// input and result; the app's tools/call and resources/read go to the server through the page's
// connection, like any host relays them.

import { h } from "./dom.js";

export const APP_MIME = "text/html;profile=mcp-app";
const APPS_PROTOCOL = "2026-01-26";

/** The UI resource a tool names, if any (the flat `ui/resourceUri` key is the deprecated form). */
export function uiResourceOf(tool) {
  const meta = (tool && tool._meta) || {};
  const uri = (meta.ui && meta.ui.resourceUri) || meta["ui/resourceUri"];
  return typeof uri === "string" && uri.startsWith("ui://") ? uri : null;
}

function visibility(tool) {
  const value = tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility;
  return Array.isArray(value) ? value : ["model", "app"]; // the default: both
}

/** Whether an app may call *tool*. */
export function appMayCall(tool) {
  return visibility(tool).includes("app");
}

/** Whether a model would be shown *tool* (a host hides app-only tools from it; the inspector marks them). */
export function modelMayCall(tool) {
  return visibility(tool).includes("model");
}

function policy(csp) {
  const list = (key) => ((csp && Array.isArray(csp[key]) && csp[key].length) ? ` ${csp[key].join(" ")}` : "");
  const resources = list("resourceDomains");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline'${resources}`,
    `style-src 'self' 'unsafe-inline'${resources}`,
    `img-src 'self' data:${resources}`,
    `font-src 'self'${resources}`,
    `media-src 'self' data:${resources}`,
    `connect-src${list("connectDomains") || " 'none'"}`,
    `frame-src${list("frameDomains") || " 'none'"}`,
    "object-src 'none'",
    `base-uri${list("baseUriDomains") || " 'self'"}`,
  ].join("; ");
}

/**
 * The app's HTML with its policy as the first element of its <head>: the head a browser builds from
 * that HTML, which searching the text for "<head" does not find (it matches <header>, a <head> in a
 * comment or a script, and there may be no <head> at all). A <meta> CSP outside the head is
 * ignored, and one after a script does not cover that script. So the HTML parser itself places it:
 * the document is parsed (a DOMParser document runs no script and loads nothing), the <meta> put
 * first in its head, and the document written out again.
 */
export function withPolicy(html, csp) {
  const doc = new DOMParser().parseFromString(html, "text/html");
  const meta = doc.createElement("meta");
  meta.setAttribute("http-equiv", "Content-Security-Policy");
  meta.setAttribute("content", policy(csp));
  doc.head.prepend(meta);
  let text = "";
  for (const node of doc.childNodes) { // the doctype and comments outside <html> too
    if (node.nodeType === Node.DOCUMENT_TYPE_NODE) text += new XMLSerializer().serializeToString(node);
    else if (node.nodeType === Node.COMMENT_NODE) text += `<!--${node.data}-->`;
    else if (node.nodeType === Node.ELEMENT_NODE) text += node.outerHTML;
  }
  return text;
}

const views = new Set();

window.addEventListener("message", (event) => {
  for (const view of views) {
    if (view.iframe.contentWindow === event.source) {
      view.receive(event.data);
      return;
    }
  }
});

/** One rendered app. *host* gives: request(method, params), tool(name), log(text, data), traffic(dir, message). */
export class AppView {
  constructor({ tool, resource, host }) {
    this.tool = tool;
    this.host = host;
    this.initialized = false;
    this.input = null;
    this.result = null;
    this.sentInput = false;
    this.sentResult = false;
    const html = typeof resource.text === "string" ? resource.text : new TextDecoder().decode(Uint8Array.from(atob(resource.blob || ""), (c) => c.charCodeAt(0)));
    const ui = (resource._meta && resource._meta.ui) || {};
    this.iframe = h("iframe", { class: "app-frame", title: `MCP App: ${resource.uri}`, sandbox: "allow-scripts" });
    this.iframe.srcdoc = withPolicy(html, ui.csp);
    this.element = h("div", { class: `app${ui.prefersBorder === false ? "" : " bordered"}`, dataset: { uri: resource.uri } },
      h("div", { class: "app-head" }, "MCP App ", h("code", {}, resource.uri)), this.iframe);
    views.add(this);
  }

  dispose() {
    views.delete(this);
  }

  post(message) {
    if (!this.iframe.contentWindow) return; // the frame is gone (another call replaced it)
    this.host.traffic("host→app", message);
    this.iframe.contentWindow.postMessage(message, "*"); // an opaque origin: "*" is the only target
  }

  setInput(args) {
    this.input = args;
    this.flush();
  }

  setResult(result) {
    this.result = result;
    this.flush();
  }

  flush() {
    // "The Host MUST NOT send any request or notification to the View before it receives an
    // initialized notification"; the input comes before the result.
    if (!this.initialized) return;
    if (this.input && !this.sentInput) {
      this.sentInput = true;
      this.post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: this.input } });
    }
    if (this.result && this.sentInput && !this.sentResult) {
      this.sentResult = true;
      this.post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: this.result });
    }
  }

  async receive(message) {
    if (!message || message.jsonrpc !== "2.0" || typeof message.method !== "string") return;
    this.host.traffic("app→host", message);
    const isRequest = message.id !== undefined && message.id !== null;
    if (!isRequest) {
      this.notification(message.method, message.params || {});
      return;
    }
    try {
      const result = await this.answer(message.method, message.params || {});
      this.post({ jsonrpc: "2.0", id: message.id, result });
    } catch (error) {
      this.post({ jsonrpc: "2.0", id: message.id, error: { code: error.code ?? -32000, message: error.message, data: error.data } });
    }
  }

  notification(method, params) {
    if (method === "ui/notifications/initialized") {
      this.initialized = true;
      this.flush();
    } else if (method === "ui/notifications/size-changed") {
      if (typeof params.height === "number") this.iframe.style.height = `${Math.min(Math.max(params.height, 60), 1200)}px`;
    } else if (method === "notifications/message") {
      this.host.log(`app log (${params.level || "info"})`, params.data);
    } else {
      this.host.log(`app notification ${method}`, params);
    }
  }

  async answer(method, params) {
    switch (method) {
      case "ui/initialize":
        return {
          protocolVersion: APPS_PROTOCOL,
          hostInfo: { name: "mcpkit-inspector", version: "0.1.0" },
          hostCapabilities: { serverTools: {}, serverResources: {}, logging: {}, openLinks: {} },
          hostContext: {
            toolInfo: { tool: this.tool },
            theme: window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            platform: "web",
            containerDimensions: { maxHeight: 1200 },
            locale: navigator.language,
          },
        };
      case "ping":
        return {};
      case "tools/call": {
        const tool = this.host.tool(params.name);
        if (tool && !appMayCall(tool)) throw Object.assign(new Error(`tool ${params.name} is not visible to apps`), { code: -32602 });
        return this.host.request("tools/call", params);
      }
      case "resources/read":
        return this.host.request("resources/read", params);
      case "ui/open-link":
        if (!/^https?:\/\//.test(String(params.url))) throw new Error("only http and https links are opened");
        window.open(params.url, "_blank", "noopener,noreferrer");
        return {};
      case "ui/message":
      case "ui/update-model-context":
        this.host.log(`app ${method}`, params);
        return {};
      case "ui/request-display-mode":
        return { mode: "inline" };
      default:
        throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
    }
  }
}
