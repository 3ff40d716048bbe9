// The processes' check of their settings at start (src/preflight.ts): a server that refuses
// them ends the process with one fatal line; otherwise says which servers answered.
import type { Deps } from "../deps.ts";
import { preflight, type Reachability } from "../preflight.ts";
import { logRefusedSetting } from "../refused-setting.ts";

export async function preflightOrExit(
  deps: Pick<Deps, "sql" | "redis" | "logger" | "config">,
  who: string,
): Promise<{ postgres: Reachability; redis: Reachability }> {
  const outcome = await preflight(deps);
  if (!outcome.refused) return outcome;
  logRefusedSetting(deps.logger, who, outcome.refused, deps.config);
  process.exit(1);
}
