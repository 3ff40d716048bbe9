// The real API (buildApp with real PostgreSQL and Redis) for one test file, plus tokens.
import { loadConfig, type Config } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { buildApp, type AppInstance } from "../../src/http/app.ts";
import { mintToken, type TokenClaims } from "../../src/http/mint-token.ts";
import { createLogger } from "../../src/logger.ts";
import { whenReady } from "../../src/redis.ts";
import { createTestDatabase, uniqueQueuePrefix } from "./db.ts";
import { TEST_JWT_SECRET, TEST_REDIS_URL } from "./env.ts";
import { deletePrefixKeys } from "./redis-keys.ts";

export type TestApp = {
  app: AppInstance;
  deps: Deps;
  config: Config;
  /** A token for `sub` with the given scopes (space-separated); all non-admin scopes by default. */
  token: (sub: string, scope?: string, extra?: Partial<TokenClaims>) => Promise<string>;
  close: () => Promise<void>;
};

export const ALL_SCOPES =
  "wallets:read wallets:write transactions:read alerts:read alerts:write ingest:write risk:write";

/**
 * Email to the outbox and SMS to the log unless a test names SMTP_URL or TWILIO_* (or sets
 * EMAIL_TRANSPORT / SMS_TRANSPORT itself; "" is unset): the tests that make email and SMS
 * alerts without a provider opt in, as the demo does, since the service no longer falls back alone.
 */
export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    ...(overrides.SMTP_URL ? {} : { EMAIL_TRANSPORT: "outbox" }),
    ...(overrides.TWILIO_ACCOUNT_SID ? {} : { SMS_TRANSPORT: "log" }),
    REDIS_URL: TEST_REDIS_URL,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: "silent",
    WEBHOOK_ALLOW_HTTP: "true",
    WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8,::1/128",
    RETRY_SCHEDULE: "200ms,400ms,800ms",
    // Tests write to the database directly between reads; the list cache has its own test.
    WALLET_LIST_CACHE_TTL: "0ms",
    ...overrides,
  };
}

export async function startTestApp(
  label: string,
  envOverrides: Record<string, string> = {},
  /** Hooks a test adds to the app before it is ready (Fastify takes none after). */
  /** now: the app's clock, for a test that must not straddle a boundary of real time. */
  options: { beforeReady?: (app: AppInstance) => void; now?: Deps["now"] } = {},
): Promise<TestApp> {
  const database = await createTestDatabase(label);
  const config = loadConfig(
    testEnv({ DATABASE_URL: database.url, QUEUE_PREFIX: uniqueQueuePrefix(label), ...envOverrides }),
  );
  const deps = createDeps(config, { logger: createLogger(config.logLevel), dbPoolSize: 4, now: options.now });
  if (!(await whenReady(deps.redis, 5_000))) throw new Error(`Redis at ${config.redisUrl} is needed by the tests`);
  const app = await buildApp(deps);
  options.beforeReady?.(app);
  await app.ready();
  return {
    app,
    deps,
    config,
    token: (sub, scope = ALL_SCOPES, extra = {}) =>
      mintToken(TEST_JWT_SECRET, { sub, scope, ttlSeconds: 3600, ...extra }, config.jwt),
    close: async () => {
      // BullMQ writes each queue's meta key once its connection is ready, without waiting for
      // the write: a test that closes at once had it land after the cleanup below (the
      // leftovers check then failed the file). getVersion waits for that write; bounded, for a
      // test that leaves Redis cut off (nothing is written then anyway).
      const metaWritten = Promise.all(Object.values(deps.queues).map((queue) => queue.getVersion()));
      await Promise.race([metaWritten.catch(() => {}), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      await app.close();
      // The test's queues, jobs and activity counters: the Redis is shared, and a run of the
      // pipeline tests would otherwise leave thousands of keys behind.
      await deletePrefixKeys(deps.redis, config.queuePrefix);
      await deps.close();
      await database.drop();
    },
  };
}
