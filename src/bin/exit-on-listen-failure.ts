// A server that cannot listen (the port taken or privileged, HOST not an address of this
// machine) will not be helped by waiting: one fatal line naming the setting, not Node's stack
// trace, the process's connections closed, exit 1. Shared by the API and the worker's metrics
// server.
import type { Logger } from "../logger.ts";
import { listenFailure } from "../listen-failure.ts";

export type ListenFailureExit = {
  logger: Logger;
  /** Who says it, first on the line: "api", "worker". */
  who: string;
  portSetting: "PORT" | "WORKER_METRICS_PORT";
  port: number;
  host: string;
  /** Closes what the process opened; bounded here, so a close that hangs does not keep it. */
  close: () => Promise<void>;
};

const CLOSE_BOUND_MS = 5_000;

export async function exitOnListenFailure(error: unknown, options: ListenFailureExit): Promise<never> {
  const { setting, code, message } = listenFailure(error, options);
  options.logger.fatal({ setting, code, port: options.port, host: options.host }, `${options.who}: ${message}; exiting`);
  setTimeout(() => process.exit(1), CLOSE_BOUND_MS).unref();
  await options.close().catch(() => {});
  process.exit(1);
}
