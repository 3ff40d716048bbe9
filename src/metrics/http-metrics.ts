// HTTP request durations by method, route template and status. The route is the template
// (/v1/wallets/:walletId), never the raw URL, so the number of series stays bounded.
import type { FastifyInstance } from "fastify";
import { Histogram, type Registry } from "prom-client";
import { METRIC_PREFIX } from "./registry.ts";

const BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function registerHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const histogram = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: "Time from receiving a request to sending its response, by method, route template and status code.",
    labelNames: ["method", "route", "status_code"],
    buckets: BUCKETS_SECONDS,
    registers: [registry],
  });
  app.addHook("onResponse", (request, reply, done) => {
    histogram.observe(
      {
        method: request.method,
        // Unmatched URLs (404s, scanners) share one label value instead of one series each.
        route: request.routeOptions.url ?? "unmatched",
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
