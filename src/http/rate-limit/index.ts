// Per-caller rate limit for /v1 (RATE_LIMIT_PER_MINUTE), shared by every API process through
// Redis, with the RateLimit-* headers of the IETF draft and Retry-After on a 429.
import type { FastifyInstance } from "fastify";
import type { Deps } from "../../deps.ts";
import { ProblemError } from "../problem.ts";
import { startRateLimitSync } from "./redis-sync.ts";
import { createWindowCounter } from "./window-counter.ts";

export const RATE_LIMIT_SYNC_MS = 100;

export function registerRateLimit(app: FastifyInstance, deps: Deps): void {
  const counter = createWindowCounter(deps.config.rateLimitPerMinute);
  const now = () => deps.now().getTime();
  const sync = startRateLimitSync(deps.redis, counter, {
    keyPrefix: `${deps.config.queuePrefix}:rate-limit:`,
    intervalMs: RATE_LIMIT_SYNC_MS,
    now,
    onError: (error) => deps.logger.warn({ err: error }, "rate-limit counts could not reach Redis"),
  });
  app.addHook("onClose", async () => sync.stop());

  // Runs after authentication (hooks run in the order they were added): the key is the caller.
  app.addHook("onRequest", async (request, reply) => {
    if (request.caller === undefined) return;
    if (deps.redis.status !== "ready" || !sync.healthy()) {
      throw new ProblemError("unavailable", "a backing service is unavailable; retry shortly", {
        headers: { "retry-after": "5" },
      });
    }
    const decision = counter.take(request.caller.sub, now());
    reply.header("ratelimit-limit", decision.limit);
    reply.header("ratelimit-remaining", decision.remaining);
    reply.header("ratelimit-reset", decision.resetSeconds);
    if (!decision.allowed) {
      throw new ProblemError("rate_limited", `more than ${decision.limit} requests in a minute; retry in ${decision.resetSeconds} s`, {
        headers: { "retry-after": String(decision.resetSeconds) },
      });
    }
  });
}
