// Liveness and readiness, outside /v1 and without auth: for load balancers and orchestrators.
import type { FastifyPluginAsync } from "fastify";
import type { Deps } from "../../deps.ts";
import { sendProblem } from "../error-handler.ts";

const CHECK_TIMEOUT_MS = 2_000;

export function healthRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));

    app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
      const [postgres, redis] = await Promise.all([
        check(() => deps.sql`select 1`),
        check(() => deps.redis.ping()),
      ]);
      if (postgres && redis) return { status: "ready", postgres: "up", redis: "up" };
      const down = [postgres ? null : "PostgreSQL", redis ? null : "Redis"].filter(Boolean).join(" and ");
      return sendProblem(reply, "unavailable", `${down} cannot be reached`, { headers: { "retry-after": "5" } });
    });
  };
}

async function check(probe: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), CHECK_TIMEOUT_MS);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
