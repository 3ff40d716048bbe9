// A proxy on loopback between the SMS channel and the Twilio stand-in, as an operator's proxy
// or gateway at TWILIO_BASE_URL would sit. It passes requests on (`pass`), answers them itself
// without passing them on, as a proxy with a wrong path or wrong credentials does (`answer`:
// 404, 407… with a page of its own, no Twilio error code), or passes them on and replaces the
// body of a 2xx answer with one of its own (`mangle`: the message reached the stand-in, whose
// answer the client never reads).
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type ProxyBehaviour =
  | { mode: "pass" }
  | { mode: "answer"; status: number; contentType: string; body: string }
  | { mode: "mangle"; contentType: string; body: string };

export type TwilioProxy = {
  baseUrl: string;
  /** How requests are handled from now on. */
  behave: (behaviour: ProxyBehaviour) => void;
  /** How many requests reached the proxy, and how many it passed on. */
  counts: () => { received: number; passed: number };
  close: () => Promise<void>;
};

/** Headers that describe one hop's framing, not the answer. */
const HOP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"]);

export async function startTwilioProxy(upstreamBaseUrl: string): Promise<TwilioProxy> {
  const upstream = new URL(upstreamBaseUrl);
  let behaviour: ProxyBehaviour = { mode: "pass" };
  let received = 0;
  let passed = 0;

  const server: Server = createServer((incoming, outgoing) => {
    received++;
    void (async () => {
      const body = await readAll(incoming);
      const current = behaviour;
      if (current.mode === "answer") {
        outgoing.writeHead(current.status, { "content-type": current.contentType, "content-length": Buffer.byteLength(current.body) });
        outgoing.end(current.body);
        return;
      }
      passed++;
      const answer = await forward(upstream, incoming, body);
      const mangled = current.mode === "mangle" && answer.status >= 200 && answer.status < 300;
      const answerBody = mangled ? Buffer.from(current.body) : answer.body;
      const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_HEADERS.has(name)));
      outgoing.writeHead(answer.status, { ...headers, ...(mangled ? { "content-type": current.contentType } : {}), "content-length": answerBody.length });
      outgoing.end(answerBody);
    })().catch((error: unknown) => {
      outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end(`Twilio proxy: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    behave: (next) => {
      behaviour = next;
    },
    counts: () => ({ received, passed }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

type Answer = { status: number; headers: IncomingMessage["headers"]; body: Buffer };

function forward(upstream: URL, incoming: IncomingMessage, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: { ...incoming.headers, host: upstream.host } },
      (response) => {
        readAll(response).then((answerBody) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: answerBody }), reject);
      },
    );
    outgoing.once("error", reject);
    outgoing.end(body);
  });
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
