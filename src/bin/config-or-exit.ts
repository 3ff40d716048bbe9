// The commands' way to start: the configuration, or one clear line on stderr and exit 1.
import { loadConfig, type Config } from "../config.ts";

export function loadConfigOrExit(options: { worker?: boolean } = {}): Config {
  return orExit(() => loadConfig(process.env, options));
}

/** Any configuration reader (the full one, or a command's narrower one) with the same failure. */
export function orExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
