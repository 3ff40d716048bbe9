// An app built on its own database and queue prefix whose every log line (at `level` and
// above) is kept in `lines`: for tests of what reaches the log. A DATABASE_URL in `env` is a
// database the test provides (through a proxy it cuts, as a role with fewer rights, or one that
// is not there at all): the app uses that one, and no database is made or dropped here.
import { Writable } from "node:stream";
import { loadConfig } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { buildApp, type AppInstance } from "../../src/http/app.ts";
import { createLogger } from "../../src/logger.ts";
import { whenReady } from "../../src/redis.ts";
import { testEnv } from "./app.ts";
import { createTestDatabase, uniqueQueuePrefix } from "./db.ts";
import { deletePrefixKeys } from "./redis-keys.ts";

export type LoggedApp = { app: AppInstance; deps: Deps; lines: string[]; close: () => Promise<void> };

export async function startLoggedApp(name: string, env: Record<string, string>, level: string): Promise<LoggedApp> {
  const database = env.DATABASE_URL === undefined ? await createTestDatabase(name) : undefined;
  const config = loadConfig(testEnv({ ...(database && { DATABASE_URL: database.url }), QUEUE_PREFIX: uniqueQueuePrefix(name), ...env }));
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const deps = createDeps(config, { logger: createLogger(level, sink) });
  await whenReady(deps.redis, 5_000);
  const app = await buildApp(deps);
  return {
    app,
    deps,
    lines,
    close: async () => {
      await app.close();
      await deletePrefixKeys(deps.redis, deps.config.queuePrefix);
      await deps.close();
      await database?.drop();
    },
  };
}
