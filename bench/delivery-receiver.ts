// The benchmark's webhook receiver, in its own process (forked by bench/delivery.ts) so that
// receiving does not share an event loop with delivering. Every request is verified with
// the standardwebhooks package against its alert's secret (the alert id is the last path
// segment); the latency is receipt time minus the payload's timestamp (row creation).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

type FromParent = { secrets: Record<string, string> } | { count: true } | { report: true; reset?: boolean };

const verifiers = new Map<string, Webhook>();
let received = 0;
let failedVerification = 0;
let latencies: number[] = [];
let lastReceivedAt = 0;
const seenIds = new Set<string>();
let duplicates = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const now = Date.now();
    const alertId = (req.url ?? "").split("/").pop() ?? "";
    const verifier = verifiers.get(alertId);
    try {
      if (!verifier) throw new Error(`no secret for ${alertId}`);
      const payload = verifier.verify(Buffer.concat(chunks).toString("utf8"), {
        "webhook-id": String(req.headers["webhook-id"]),
        "webhook-timestamp": String(req.headers["webhook-timestamp"]),
        "webhook-signature": String(req.headers["webhook-signature"]),
      }) as { timestamp: string };
      const id = String(req.headers["webhook-id"]);
      if (seenIds.has(id)) duplicates++;
      seenIds.add(id);
      received++;
      lastReceivedAt = now;
      latencies.push(now - Date.parse(payload.timestamp));
      res.writeHead(204).end();
    } catch {
      failedVerification++;
      res.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 60_000;

process.on("message", (message: FromParent) => {
  if ("secrets" in message) {
    for (const [alertId, secret] of Object.entries(message.secrets)) verifiers.set(alertId, new Webhook(secret));
    process.send!({ ready: true });
    return;
  }
  if ("count" in message) {
    process.send!({ received, failedVerification });
    return;
  }
  process.send!({ received, failedVerification, duplicates, lastReceivedAt, latencies });
  if (message.reset) {
    received = 0;
    failedVerification = 0;
    duplicates = 0;
    latencies = [];
    seenIds.clear();
  }
});

server.listen(0, "127.0.0.1", () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});
