// The commands' way to start: the configuration, or one clear line on stderr and exit 1.
import { loadConfig, type Config } from "../config.ts";

export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
