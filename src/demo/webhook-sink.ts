// The demo's built-in webhook receiver: it verifies every delivery with the Standard
// Webhooks library, as a customer's endpoint would, and reports what it got.
import { createServer, type Server } from "node:http";
import { Webhook } from "standardwebhooks";

export type SinkDelivery = {
  webhookId: string;
  verified: boolean;
  payload: { type?: string; data?: { alertId?: string; condition?: string; alias?: string; reason?: string } };
};

export type WebhookSink = {
  url: string;
  /** Registers the secret shown when an alert was created. */
  trust: (alertId: string, secret: string) => void;
  close: () => Promise<void>;
};

export type SinkOptions = { host?: string; port?: number; /** The URL the API should call, when it differs (containers). */ publicUrl?: string | undefined };

export async function startWebhookSink(onDelivery: (delivery: SinkDelivery) => void, options: SinkOptions = {}): Promise<WebhookSink> {
  const secrets = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let payload: SinkDelivery["payload"];
      try {
        payload = JSON.parse(body) as SinkDelivery["payload"];
      } catch {
        response.writeHead(400).end();
        return;
      }
      const secret = secrets.get(payload.data?.alertId ?? "");
      let verified = false;
      if (secret) {
        try {
          new Webhook(secret).verify(body, request.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
      }
      onDelivery({ webhookId: String(request.headers["webhook-id"] ?? ""), verified, payload });
      // A receiver that cannot verify says so; the service records it as a permanent failure.
      response.writeHead(verified ? 204 : 401).end();
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : options.port;
  return {
    url: options.publicUrl ?? `http://${host}:${boundPort}/hooks/risk-alerts`,
    trust: (alertId, secret) => secrets.set(alertId, secret),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
