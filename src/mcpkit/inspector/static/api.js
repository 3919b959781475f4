// The page's line to its backend: one event stream (SSE) in, operations as POSTs out.

export class Api {
  constructor(token, onEvent) {
    this.token = token;
    this.session = null;
    this.onEvent = onEvent;
  }

  start() {
    const source = new EventSource(`/api/events?token=${encodeURIComponent(this.token)}`);
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      if (event.type === "hello") this.session = event.session;
      this.onEvent(event);
    };
    source.onerror = () => this.onEvent({ type: "offline" });
    this.source = source;
  }

  /** Run one operation; throws an Error carrying the JSON-RPC code and data, if any. */
  async op(op, params = {}) {
    const query = `token=${encodeURIComponent(this.token)}&session=${encodeURIComponent(this.session)}`;
    const reply = await fetch(`/api/op?${query}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ op, params }),
    });
    const body = await reply.json();
    if (body.error) {
      const error = new Error(body.error.message || "failed");
      error.code = body.error.code;
      error.data = body.error.data;
      throw error;
    }
    return body.result;
  }
}
