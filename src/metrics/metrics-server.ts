// A tiny server for processes that have no HTTP app of their own (the worker): the same probes
// as the API's, without credentials (for orchestrators: /healthz answers while the event loop
// runs, /readyz while PostgreSQL and Redis serve the process), and /metrics behind the same admin
// credentials as the API's. Without ADMIN_USER /metrics answers 404, as the API's does: a port
// opened for the probes alone needs no credentials, and no operator surface is left open.
import { randomUUID } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { PROBLEM_CONTENT_TYPE, problemBody } from "../http/problem.ts";
import type { Readiness } from "../readiness.ts";
import { adminEnabled, BASIC_CHALLENGE, createBasicAuthCheck, type AdminCredentials } from "./basic-auth.ts";

export type MetricsServer = { port: number; close: () => Promise<void> };

export async function startMetricsServer(
  registry: Registry,
  port: number,
  admin: AdminCredentials,
  host = "0.0.0.0",
  readiness?: () => Promise<Readiness>,
): Promise<MetricsServer> {
  const authorized = createBasicAuthCheck(admin);
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const reading = request.method === "GET" || request.method === "HEAD";
    if (path === "/healthz" && reading) {
      response.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify({ status: "ok" }));
      return;
    }
    if (path === "/readyz" && reading && readiness) {
      void answerReadiness(readiness, response);
      return;
    }
    if (path !== "/metrics" || !reading || !adminEnabled(admin)) {
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

async function answerReadiness(readiness: () => Promise<Readiness>, response: ServerResponse): Promise<void> {
  const state = await readiness();
  if (state.ready) {
    response.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify({ status: "ready", postgres: "up", redis: "up" }));
    return;
  }
  response
    .writeHead(503, { "content-type": PROBLEM_CONTENT_TYPE, "retry-after": String(state.retryAfter) })
    .end(JSON.stringify(problemBody("unavailable", state.reason, randomUUID())));
}
