// HTTP request durations by method, route template and status. The route is the template
// (/v1/wallets/:walletId), never the raw URL, so the number of series stays bounded.
import type { CompletedRequests } from "../http/completed-requests.ts";
import { Histogram, type Registry } from "prom-client";
import { METRIC_PREFIX } from "./registry.ts";

const BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function registerHttpMetrics(completed: Pick<CompletedRequests, "observe">, registry: Registry): void {
  const histogram = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: "Time from receiving a request to sending its response, by method, route template and status code.",
    labelNames: ["method", "route", "status_code"],
    buckets: BUCKETS_SECONDS,
    registers: [registry],
  });
  completed.observe((request, reply, ms) => {
    histogram.observe(
      {
        method: request.method,
        // Unmatched URLs (404s, scanners, malformed) share one label value instead of one series each.
        route: request.routeOptions.url ?? "unmatched",
        status_code: String(reply.statusCode),
      },
      ms / 1000,
    );
  });
}
