// The processes' check of their settings at start (src/preflight.ts): a server that refuses
// them ends the process with one fatal line; otherwise says which servers answered.
import { errorSummary } from "../dependency-errors.ts";
import type { Deps } from "../deps.ts";
import { preflight, PREFLIGHT_TIMEOUT_MS, type Reachability } from "../preflight.ts";
import { redactUrl } from "../redact-url.ts";
import { logRefusedSetting } from "../refused-setting.ts";

export async function preflightOrExit(
  deps: Pick<Deps, "sql" | "redis" | "logger" | "config">,
  who: string,
): Promise<{ postgres: Reachability; redis: Reachability }> {
  const outcome = await preflight(deps);
  if (!outcome.refused) {
    // The process goes on and waits for Redis (and says so itself); this line says why it waits,
    // which the connection's errors told only at debug: a host, port or TLS scheme typed wrong
    // looked like an outage. PostgreSQL's reason is in its own line (db/schema-version.ts).
    if (outcome.redis === "unreachable") {
      const why = outcome.redisError === undefined ? "no answer" : errorSummary(outcome.redisError);
      deps.logger.warn(
        { setting: "REDIS_URL", url: redactUrl(deps.config.redisUrl) },
        `${who}: Redis at ${redactUrl(deps.config.redisUrl)} did not answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s (${why}); check REDIS_URL if it should be up`,
      );
    }
    return outcome;
  }
  logRefusedSetting(deps.logger, who, outcome.refused, deps.config);
  process.exit(1);
}
