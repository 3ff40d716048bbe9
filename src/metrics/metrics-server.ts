// A tiny /metrics server for processes that have no HTTP app of their own (the worker),
// behind the same admin credentials as the API's /metrics.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { BASIC_CHALLENGE, createBasicAuthCheck, type AdminCredentials } from "./basic-auth.ts";

export type MetricsServer = { port: number; close: () => Promise<void> };

export async function startMetricsServer(
  registry: Registry,
  port: number,
  admin: AdminCredentials,
  host = "0.0.0.0",
): Promise<MetricsServer> {
  const authorized = createBasicAuthCheck(admin);
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
      return;
    }
    if (!authorized(request.headers.authorization)) {
      response
        .writeHead(401, { "www-authenticate": BASIC_CHALLENGE, "content-type": "text/plain; charset=utf-8" })
        .end("admin credentials required\n");
      return;
    }
    registry.metrics().then(
      (body) => response.writeHead(200, { "content-type": registry.contentType }).end(body),
      () => response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics unavailable\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
