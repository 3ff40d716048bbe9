// A client for the contract test: every request goes through app.inject() and every answer
// is checked against the published OpenAPI document (openapi-contract.ts); what does not
// conform is kept, to be reported by the test that made the request.
import type { AppInstance } from "../../src/http/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { buildApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/logger.ts";
import { whenReady } from "../../src/redis.ts";
import { testEnv } from "./app.ts";
import { createTestDatabase, uniqueQueuePrefix } from "./db.ts";
import { deletePrefixKeys } from "./redis-keys.ts";
import type { Contract } from "./openapi-contract.ts";

export type Request = {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  url: string;
  token?: string;
  headers?: Record<string, string>;
  /** A JSON body (sent as application/json), or raw text with its own content-type header. */
  payload?: unknown;
};

export type Recorded = { statusCode: number; headers: Record<string, unknown>; body: string; json: <T = unknown>() => T };

export type ContractClient = {
  call: (app: AppInstance, request: Request) => Promise<Recorded>;
  /** Adds violations found elsewhere (the app's own hooks) to those of the answers. */
  report: (found: string[]) => void;
  /** The violations seen since the last call of this, and forgets them. */
  takeViolations: () => string[];
};

export function createContractClient(contract: Contract): ContractClient {
  let violations: string[] = [];
  return {
    call: async (app, request) => {
      const headers: Record<string, string> = {
        ...(request.token ? { authorization: `Bearer ${request.token}` } : {}),
        // Raw text is JSON unless the request says otherwise (inject would send it as text/plain).
        ...(typeof request.payload === "string" ? { "content-type": "application/json" } : {}),
        ...request.headers,
      };
      const res = await app.inject({
        method: request.method,
        url: request.url,
        headers,
        ...(request.payload === undefined ? {} : { payload: request.payload as string | object }),
      });
      violations.push(...contract.check(request.method, request.url, res));
      return { statusCode: res.statusCode, headers: res.headers, body: res.body, json: <T>() => res.json<T>() };
    },
    report: (found) => {
      violations.push(...found);
    },
    takeViolations: () => {
      const taken = violations;
      violations = [];
      return taken;
    },
  };
}

/**
 * The API with a PostgreSQL that refuses connections (a closed loopback port) and the real
 * Redis: every request that reaches the database answers 503, while authentication and the
 * rate limit still work.
 */
export async function startAppWithoutDatabase(label: string, env: Record<string, string> = {}) {
  // backoff=0: postgres.js would otherwise wait longer before each new attempt, up to 20 s.
  return startAppOn(label, "postgres://postgres@127.0.0.1:1/unreachable?backoff=0", env);
}

/** The API on a database without tables: every query fails in a way nobody planned for (a 500). */
export async function startAppOnEmptyDatabase(label: string, env: Record<string, string> = {}) {
  const database = await createTestDatabase(label, { empty: true });
  const started = await startAppOn(label, database.url, env);
  return { ...started, close: async () => (await started.close(), await database.drop()) };
}

async function startAppOn(label: string, databaseUrl: string, env: Record<string, string>) {
  const config = loadConfig(testEnv({ DATABASE_URL: databaseUrl, QUEUE_PREFIX: uniqueQueuePrefix(label), ...env }));
  const deps: Deps = createDeps(config, { logger: createLogger(config.logLevel), dbPoolSize: 1 });
  if (!(await whenReady(deps.redis, 5_000))) throw new Error(`Redis at ${config.redisUrl} is needed by the tests`);
  const app = await buildApp(deps);
  await app.ready();
  return {
    app,
    config,
    close: async () => {
      await app.close();
      await deletePrefixKeys(deps.redis, config.queuePrefix);
      await deps.close();
    },
  };
}
