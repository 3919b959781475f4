// The benchmark's server on the TypeScript SDK's low-level Server (tools echo and add).
//   node server.mjs              stdio
//   node server.mjs --http PORT  Streamable HTTP at http://127.0.0.1:PORT/mcp, one session per client
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [
  {
    name: "echo",
    description: "Return the text unchanged.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  {
    name: "add",
    description: "Add two integers.",
    inputSchema: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] },
  },
];

function makeServer() {
  const server = new Server({ name: "bench-ts", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    if (request.params.name === "echo") return { content: [{ type: "text", text: String(args.text) }] };
    if (request.params.name === "add") return { content: [{ type: "text", text: String(args.a + args.b) }] };
    return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true };
  });
  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function serveHttp(port) {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    try {
      if (!req.url.startsWith("/mcp")) {
        res.writeHead(404).end();
        return;
      }
      const sessionId = req.headers["mcp-session-id"];
      let body;
      if (req.method === "POST") {
        const text = await readBody(req);
        body = text ? JSON.parse(text) : undefined;
      }
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId || req.method !== "POST" || !isInitializeRequest(body)) {
          res.writeHead(sessionId ? 404 : 400, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no valid session" } }));
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) transports.delete(transport.sessionId);
        };
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  http.keepAliveTimeout = 60_000;
  http.listen(port, "127.0.0.1");
}

const httpAt = process.argv.indexOf("--http");
if (httpAt >= 0) {
  await serveHttp(Number(process.argv[httpAt + 1]));
} else {
  await makeServer().connect(new StdioServerTransport());
}
