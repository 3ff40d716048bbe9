// The commands' way to start: the configuration, or one line saying what is wrong and exit 1.
// The services (api, worker, migrate, reseed-activity) say it as a fatal JSON line on stdout,
// like all their other lines: a log pipeline, and an alert on level >= 50, used to miss exactly
// the line behind a CrashLoopBackOff, printed as plain text on stderr. The commands people read
// (queues, token, the demo) print it as plain text.
import { loadConfig, type Config } from "../config.ts";
import { createLogger } from "../logger.ts";

export function loadConfigOrExit(options: { worker?: boolean } = {}): Config {
  return orExitLogged(() => loadConfig(process.env, options));
}

/** Any configuration reader (the full one, or a command's narrower one), its failure on stderr as plain text. */
export function orExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}

/** The same, its failure as a fatal log line. */
export function orExitLogged<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    return exitWithFatalLine((error as Error).message);
  }
}

/**
 * One fatal line (level, time, role, msg, and `fields`), then exit 1. At level fatal whatever
 * LOG_LEVEL says: it may be the setting refused, and a process that stops must say why.
 */
export function exitWithFatalLine(message: string, fields: Record<string, unknown> = {}): never {
  createLogger("fatal").fatal(fields, message);
  process.exit(1);
}
