// The operator surfaces of the API: Bull Board at /admin/queues and Prometheus /metrics,
// both behind ADMIN_USER/ADMIN_PASSWORD (HTTP Basic). Without ADMIN_USER they are not
// registered at all and answer 404 like any unknown path: an operator surface that was not
// configured stays invisible instead of open. The HTTP request histogram is recorded on
// every route either way.
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { FastifyPluginAsync } from "fastify";
import fastifyPlugin from "fastify-plugin";
import type { Registry } from "prom-client";
import type { Deps } from "../deps.ts";
import { adminEnabled, BASIC_CHALLENGE, createBasicAuthCheck } from "../metrics/basic-auth.ts";
import { createCarrierMetrics } from "../metrics/carrier-metrics.ts";
import { registerHttpMetrics } from "../metrics/http-metrics.ts";
import { createMetricsRegistry } from "../metrics/registry.ts";
import { registerScrapeCollectors } from "../metrics/scrape-collectors.ts";
import { ALL_QUEUES } from "../queue/names.ts";
import { sendProblem } from "./error-handler.ts";

export const ADMIN_QUEUES_PATH = "/admin/queues";
export const METRICS_PATH = "/metrics";

/** Registered on the root app (not encapsulated) so the request histogram sees every route. */
export function adminPlugin(deps: Deps): FastifyPluginAsync {
  return fastifyPlugin(
    async (app) => {
      const registry = createMetricsRegistry();
      registerHttpMetrics(app, registry);
      registerScrapeCollectors(registry, deps);
      // For the Twilio status callback route, which counts the verdicts it records.
      app.decorate("carrierMetrics", createCarrierMetrics(registry));
      if (!adminEnabled(deps.config.admin)) return;
      await app.register(protectedRoutes(deps, registry));
    },
    { name: "wallet-alerts-admin" },
  );
}

function protectedRoutes(deps: Deps, registry: Registry): FastifyPluginAsync {
  return async (app) => {
    const authorized = createBasicAuthCheck(deps.config.admin);
    // Answer here rather than throw: Bull Board installs its own error handler for its
    // routes, which would turn a thrown 401 into its generic 500 body.
    app.addHook("onRequest", async (request, reply) => {
      if (authorized(request.headers.authorization)) return;
      return sendProblem(reply, "unauthorized", "the admin surfaces need ADMIN_USER and ADMIN_PASSWORD (HTTP Basic)", {
        headers: { "www-authenticate": BASIC_CHALLENGE },
      });
    });

    app.get(METRICS_PATH, { schema: { hide: true } }, async (_request, reply) =>
      reply.type(registry.contentType).send(await registry.metrics()),
    );

    // Bull Board answers any error with its own 500 and the error's message; with Redis away
    // its API says so like every other route: 503 problem+json (ioredis knows at once).
    app.addHook("preHandler", async (request, reply) => {
      if (!request.url.startsWith(`${ADMIN_QUEUES_PATH}/api/`) || deps.redis.status === "ready") return;
      return sendProblem(reply, "unavailable", "Redis cannot be reached", { headers: { "retry-after": "5" } });
    });

    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
    createBullBoard({
      queues: ALL_QUEUES.map((name) => new BullMQAdapter(deps.queues[name])),
      serverAdapter,
      options: { uiConfig: { boardTitle: "wallet-alerts" } },
    });
    await app.register(serverAdapter.registerPlugin(), { prefix: ADMIN_QUEUES_PATH });
  };
}
