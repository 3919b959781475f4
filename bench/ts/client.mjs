// The TypeScript SDK's client in the HTTP clients' table (bench/clients_http.py): it calls echo on
// one server over Streamable HTTP, one call at a time and then WIDTH callers on one client, and
// prints one JSON line with the same figures as the Python rows.
//   node client.mjs URL SECONDS WIDTH
// Client CPU is the process's own user and system time (process.cpuUsage) over the calls.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, seconds, width] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 16)];
const TEXT = "hello, benchmark";

async function call(client) {
  const result = await client.callTool({ name: "echo", arguments: { text: TEXT } });
  if (result.content[0].text !== TEXT) throw new Error("echo answered something else");
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function phase(client, callers) {
  let count = 0;
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  async function worker() {
    let now;
    while ((now = performance.now()) < deadline) {
      await call(client);
      latencies.push(performance.now() - now);
      count += 1;
    }
  }
  await Promise.all(Array.from({ length: callers }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    calls_per_s: count / elapsed,
    cpu_us: (cpu.user + cpu.system) / count,
    p50_us: median(latencies) * 1000,
  };
}

try {
  const client = new Client({ name: "bench-ts-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  for (let i = 0; i < 50; i++) await call(client); // warm, as the Python rows are
  const figures = {};
  for (const [label, callers] of [["sequential", 1], ["concurrent", width]]) {
    const result = await phase(client, callers);
    for (const [key, value] of Object.entries(result)) figures[`${label}_${key}`] = value;
  }
  await transport.terminateSession().catch(() => {});
  await client.close();
  console.log(JSON.stringify(figures));
} catch (error) {
  console.log(JSON.stringify({ error: `${error.name}: ${error.message}` }));
}
process.exit(0);
