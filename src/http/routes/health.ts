// Liveness and readiness, outside /v1 and without auth: for load balancers and orchestrators.
import type { FastifyPluginAsync } from "fastify";
import type { Deps } from "../../deps.ts";
import { behindMessage, createSchemaCheck, type SchemaState } from "../../db/schema-version.ts";
import { sendProblem } from "../error-handler.ts";

const CHECK_TIMEOUT_MS = 2_000;

export function healthRoutes(deps: Deps): FastifyPluginAsync {
  const schemaState = createSchemaCheck(deps.sql);
  return async (app) => {
    app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));

    app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
      const [postgres, redis] = await Promise.all([
        check(() => deps.sql`select 1`),
        check(() => deps.redis.ping()),
      ]);
      if (postgres && redis) {
        const schema = await schemaOrNull(schemaState);
        if (schema === null) return sendProblem(reply, "unavailable", "PostgreSQL cannot be read", { headers: { "retry-after": "5" } });
        if (!schema.current) return sendProblem(reply, "unavailable", behindMessage(schema), { headers: { "retry-after": "30" } });
        return { status: "ready", postgres: "up", redis: "up" };
      }
      const down = [postgres ? null : "PostgreSQL", redis ? null : "Redis"].filter(Boolean).join(" and ");
      return sendProblem(reply, "unavailable", `${down} cannot be reached`, { headers: { "retry-after": "5" } });
    });
  };
}

/** The schema's state, or null when it could not be read in time. */
async function schemaOrNull(schemaState: () => Promise<SchemaState>): Promise<SchemaState | null> {
  let state: SchemaState | null = null;
  const read = await check(async () => {
    state = await schemaState();
  });
  return read ? state : null;
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
