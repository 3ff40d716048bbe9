// Per-caller rate limit for /v1 (RATE_LIMIT_PER_MINUTE), shared by every API process through
// Redis, with the RateLimit-* headers of the IETF draft and Retry-After on a 429.
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Deps } from "../../deps.ts";
import { createRepeatedWarning } from "../../log-repeats.ts";
import { trackConnectionError } from "../../redis.ts";
import { ProblemError } from "../problem.ts";
import { startRateLimitSync } from "./redis-sync.ts";
import { createWindowCounter } from "./window-counter.ts";

export const RATE_LIMIT_SYNC_MS = 100;

/** Admits a caller's request or says why not; sets the RateLimit-* headers on the reply. */
export type RateLimiter = (caller: string, reply: FastifyReply) => ProblemError | undefined;

export function createRateLimiter(app: FastifyInstance, deps: Deps): RateLimiter {
  const counter = createWindowCounter(deps.config.rateLimitPerMinute);
  const now = () => deps.now().getTime();
  const sync = startRateLimitSync(deps.redis, counter, {
    keyPrefix: `${deps.config.queuePrefix}:rate-limit:`,
    intervalMs: RATE_LIMIT_SYNC_MS,
    now,
    // Failed counts are retried every sync (ten a second) for as long as Redis is away.
    onError: createRepeatedWarning(deps.logger, "rate-limit counts could not reach Redis"),
  });
  app.addHook("onClose", async () => sync.stop());
  // The error handler logs the 503s of failed requests, not a refusal such as this one: without
  // this, an outage of Redis left the API's log with request lines only. The same words and
  // pace as the error handler's (once a minute per kind of error).
  const warnUnavailable = createRepeatedWarning(deps.logger, "dependency unavailable");
  const connectionError = trackConnectionError(deps.redis);

  return (caller, reply) => {
    // Redis down means 503 for every /v1 request (DESIGN.md section 3), cheaply known here.
    if (deps.redis.status !== "ready") {
      warnUnavailable(connectionError() ?? new Error(`Redis is not connected (${deps.redis.status})`), {
        requestId: reply.request.id,
        setting: "REDIS_URL",
      });
      return new ProblemError("unavailable", "a backing service is unavailable; retry shortly", {
        headers: { "retry-after": "5" },
      });
    }
    const decision = counter.take(caller, now());
    reply.header("ratelimit-limit", decision.limit);
    reply.header("ratelimit-remaining", decision.remaining);
    reply.header("ratelimit-reset", decision.resetSeconds);
    if (decision.allowed) return undefined;
    return new ProblemError("rate_limited", `more than ${decision.limit} requests in a minute; retry in ${decision.resetSeconds} s`, {
      headers: { "retry-after": String(decision.resetSeconds) },
    });
  };
}
