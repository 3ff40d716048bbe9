// The one line a process logs when PostgreSQL or Redis refuses its settings, before it exits:
// which setting (its URL with the password hidden) and what the server said.
import type { Config } from "./config.ts";
import { describeRefusal, type Misconfiguration } from "./dependency-errors.ts";
import type { Logger } from "./logger.ts";
import { redactUrl } from "./redact-url.ts";

export function logRefusedSetting(
  logger: Logger,
  who: string,
  refused: Misconfiguration,
  urls: Pick<Config, "databaseUrl" | "redisUrl">,
  consequence = "exiting",
): void {
  const url = redactUrl(refused.setting === "DATABASE_URL" ? urls.databaseUrl : urls.redisUrl);
  logger.fatal(
    { setting: refused.setting, url, code: refused.code },
    `${who}: ${describeRefusal(refused)} — check ${refused.setting} (${url}); ${consequence}`,
  );
}
