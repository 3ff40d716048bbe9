// A real webhook receiver on loopback (after svix's TestReceiver): a node:http server that
// answers each path with the responses it is told to, in order (200 once they run out),
// records every request, and checks every signature with the standardwebhooks package.
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export type ScriptedResponse =
  | { status: number; headers?: Record<string, string>; body?: string }
  /** Never answer: the request hangs until the client gives up or the receiver closes. */
  | { hang: true }
  /**
   * The status line and headers (Content-Length announcing all of `body`), then only the first
   * half of the body: "reset" closes the connection there, "stall" leaves it open and silent.
   */
  | { status: number; body: string; breakOff: "reset" | "stall" }
  /** The status line and headers, then `endless` over and over, for as long as the client reads. */
  | { status: number; endless: string }
  /** The status line and headers and the first half of the body, then the rest a moment later, as a slow network brings it. */
  | { status: number; body: string; inTwoParts: true }
  /** A whole answer, `afterMs` after the request came in: a receiver that takes its time. */
  | { status: number; body?: string; afterMs: number };

export type ReceivedRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
  /** The client's port: two requests on one connection share it. */
  remotePort: number | undefined;
  /** The route's secrets that this request's signature verifies with. */
  verifiedWith: string[];
};

export type Route = {
  path: string;
  url: string;
  /** Responses for the next requests, in order; 200 "ok" once they are used up. */
  respond: (...responses: ScriptedResponse[]) => Route;
  /** Secrets to verify signatures with (the alert's, and the previous one after a rotation). */
  verifyWith: (...secrets: string[]) => Route;
  requests: ReceivedRequest[];
};

export type WebhookReceiver = {
  origin: string;
  port: number;
  route: (path: string) => Route;
  /** Every request, on any path (a path nobody set up answers 404). */
  all: ReceivedRequest[];
  close: () => Promise<void>;
};

export async function startWebhookReceiver(options: { host?: string } = {}): Promise<WebhookReceiver> {
  const routes = new Map<string, Route & { queue: ScriptedResponse[]; secrets: string[] }>();
  const all: ReceivedRequest[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = (req.url ?? "/").split("?")[0]!;
      const route = routes.get(path);
      const record: ReceivedRequest = {
        method: req.method ?? "",
        path,
        headers: req.headers,
        body,
        receivedAt: Date.now(),
        remotePort: req.socket.remotePort,
        verifiedWith: route ? verifiedSecrets(route.secrets, body, req.headers) : [],
      };
      all.push(record);
      if (!route) return answer(res, { status: 404, body: "no such route" });
      route.requests.push(record);
      const next = route.queue.shift() ?? { status: 200, body: "ok" };
      if ("hang" in next) return; // leave the socket open
      if ("breakOff" in next) return answerHalf(res, next);
      if ("endless" in next) return answerEndlessly(res, next);
      if ("inTwoParts" in next) return answerInTwoParts(res, next);
      if ("afterMs" in next) return void setTimeout(() => answer(res, next), next.afterMs);
      answer(res, next);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, options.host ?? "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const origin = `http://${options.host ?? "127.0.0.1"}:${port}`;

  return {
    origin,
    port,
    all,
    route: (path) => {
      const existing = routes.get(path);
      if (existing) return existing;
      const route: Route & { queue: ScriptedResponse[]; secrets: string[] } = {
        path,
        url: `${origin}${path}`,
        queue: [],
        secrets: [],
        requests: [],
        respond: (...responses) => {
          route.queue.push(...responses);
          return route;
        },
        verifyWith: (...secrets) => {
          route.secrets.push(...secrets);
          return route;
        },
      };
      routes.set(path, route);
      return route;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(res: ServerResponse, response: { status: number; headers?: Record<string, string>; body?: string }): void {
  res.writeHead(response.status, { "content-type": "text/plain", ...response.headers });
  res.end(response.body ?? "");
}

function answerHalf(res: ServerResponse, response: { status: number; body: string; breakOff: "reset" | "stall" }): void {
  res.writeHead(response.status, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(response.body)) });
  res.write(response.body.slice(0, response.body.length / 2), () => {
    if (response.breakOff === "reset") res.socket?.destroy();
  });
}

function answerEndlessly(res: ServerResponse, response: { status: number; endless: string }): void {
  res.writeHead(response.status, { "content-type": "text/plain" });
  const more = () => {
    while (!res.destroyed && res.write(response.endless));
    if (!res.destroyed) res.once("drain", more);
  };
  more();
}

function answerInTwoParts(res: ServerResponse, response: { status: number; body: string }): void {
  res.writeHead(response.status, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(response.body)) });
  const half = response.body.length / 2;
  res.write(response.body.slice(0, half), () => setTimeout(() => res.end(response.body.slice(half)), 50));
}

function verifiedSecrets(secrets: string[], body: string, headers: IncomingHttpHeaders): string[] {
  const plain = {
    "webhook-id": String(headers["webhook-id"] ?? ""),
    "webhook-timestamp": String(headers["webhook-timestamp"] ?? ""),
    "webhook-signature": String(headers["webhook-signature"] ?? ""),
  };
  return secrets.filter((secret) => {
    try {
      new Webhook(secret).verify(body, plain);
      return true;
    } catch {
      return false;
    }
  });
}
