// Where the demo runs: its own database, Redis, port and queue prefix, never the service's. On
// a host where the service's DATABASE_URL and REDIS_URL are exported (the usual twelve-factor
// setup), `npm run demo` used to migrate that database, delete and re-seed its caller there,
// and start a worker whose reconciler took the service's owed notifications and delivered them
// with the demo's settings. So the demo reads DEMO_DATABASE_URL, DEMO_REDIS_URL, DEMO_PORT and
// DEMO_QUEUE_PREFIX, with local defaults, and passes them to the API and worker it starts as
// DATABASE_URL, REDIS_URL, PORT and QUEUE_PREFIX. Pure.
import { ConfigError } from "../config.ts";
import { integerIn, redisUrl, urlWithScheme } from "../config-parsers.ts";

export const DEMO_DEFAULTS = {
  databaseUrl: "postgres://postgres@127.0.0.1:5432/wallet_alerts_demo",
  redisUrl: "redis://127.0.0.1:6379",
  port: 3000,
  queuePrefix: "{wallet-alerts-demo}",
} as const;

export type DemoSettingsEnv = {
  DEMO_DATABASE_URL?: string | undefined;
  DEMO_REDIS_URL?: string | undefined;
  DEMO_PORT?: string | undefined;
  DEMO_QUEUE_PREFIX?: string | undefined;
  /** Attach mode: an API (and worker) that already run; the demo starts none. */
  DEMO_API_URL?: string | undefined;
  /**
   * Read in attach mode only, when DEMO_DATABASE_URL is unset: the database of the service the
   * demo was explicitly attached to (docker-compose.yml's feed gives it the stack's). Never when
   * the demo starts its own API and worker.
   */
  DATABASE_URL?: string | undefined;
};

export type DemoSettings = {
  databaseUrl: string;
  /** Which setting the database URL came from, for messages. */
  databaseSetting: "DEMO_DATABASE_URL" | "DATABASE_URL";
  redisUrl: string;
  port: number;
  queuePrefix: string;
  attachTo: string | undefined;
};

export function demoSettings(env: DemoSettingsEnv): DemoSettings {
  const problems: string[] = [];
  const read = <T>(name: keyof DemoSettingsEnv, parse: (raw: string) => T, fallback: T): T => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    try {
      return parse(raw);
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
      return fallback;
    }
  };
  const attachTo = read("DEMO_API_URL", urlWithScheme(["http:", "https:"]), undefined);
  const attachedDatabase = Boolean(env.DEMO_API_URL) && !env.DEMO_DATABASE_URL && Boolean(env.DATABASE_URL);
  const databaseSetting = attachedDatabase ? "DATABASE_URL" : "DEMO_DATABASE_URL";
  const settings: DemoSettings = {
    databaseUrl: read(databaseSetting, urlWithScheme(["postgres:", "postgresql:"]), DEMO_DEFAULTS.databaseUrl),
    databaseSetting,
    redisUrl: read("DEMO_REDIS_URL", redisUrl, DEMO_DEFAULTS.redisUrl),
    // Not 0: the demo prints the API's address, and its readiness check needs it before it listens.
    port: read("DEMO_PORT", integerIn(1, 65535), DEMO_DEFAULTS.port),
    queuePrefix: read("DEMO_QUEUE_PREFIX", (raw) => raw, DEMO_DEFAULTS.queuePrefix),
    attachTo,
  };
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  return settings;
}
