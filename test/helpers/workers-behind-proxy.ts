// Workers of a test's own, reaching PostgreSQL through a TCP proxy the test can cut or stall,
// logging into an array: the tests of what the log says while PostgreSQL is away.
import { Writable } from "node:stream";
import { loadConfig } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { createLogger } from "../../src/logger.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import type { QueueName } from "../../src/queue/names.ts";
import { runWorkers, type RunningWorkers } from "../../src/queue/run-workers.ts";
import { testEnv, type TestApp } from "./app.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "./tcp-proxy.ts";

export type WorkersBehindProxy = {
  proxy: TcpProxy;
  deps: Deps;
  running: RunningWorkers;
  /** Every line logged at info or above, as written (JSON). */
  logLines: string[];
  /** Stops the workers, their dependencies and the proxy (not the test's app). */
  close: () => Promise<void>;
};

/** Workers serving `queues` with the test app's database (through the proxy) and queue prefix; `env` adds settings. */
export async function startWorkersBehindProxy(t: TestApp, queues: readonly QueueName[], env: Record<string, string> = {}): Promise<WorkersBehindProxy> {
  const proxy = await startTcpProxy(endpointOf(t.config.databaseUrl, 5432));
  const config = loadConfig(testEnv({ DATABASE_URL: throughProxy(t.config.databaseUrl, proxy), QUEUE_PREFIX: t.config.queuePrefix, ...env }));
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  const deps = createDeps(config, { logger: createLogger("info", sink) });
  const channels = createChannels(config, deps.logger);
  const running = runWorkers({ ...deps, channels }, { queues });
  return {
    proxy,
    deps,
    running,
    logLines,
    close: async () => {
      await running.close();
      await channels.close();
      await deps.close();
      await proxy.close();
    },
  };
}
