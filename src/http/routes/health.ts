// Liveness and readiness, outside /v1 and without auth: for load balancers and orchestrators.
import type { FastifyPluginAsync } from "fastify";
import type { Deps } from "../../deps.ts";
import { createReadinessCheck } from "../../readiness.ts";
import { sendProblem } from "../error-handler.ts";
import { DRAINING_RETRY_AFTER_SECONDS } from "../server-refusals.ts";

/** shuttingDown: true from SIGTERM on (src/bin/api.ts): /readyz says so, for load balancers to stop sending here. */
export function healthRoutes(deps: Deps, shuttingDown: () => boolean = () => false): FastifyPluginAsync {
  const readiness = createReadinessCheck(deps);
  return async (app) => {
    app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));

    app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
      if (shuttingDown()) {
        return sendProblem(reply, "unavailable", "the server is shutting down", {
          headers: { "retry-after": String(DRAINING_RETRY_AFTER_SECONDS) },
        });
      }
      const state = await readiness();
      if (state.ready) return { status: "ready", postgres: "up", redis: "up" };
      return sendProblem(reply, "unavailable", state.reason, { headers: { "retry-after": String(state.retryAfter) } });
    });
  };
}
