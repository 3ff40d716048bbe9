// npm run reseed-activity [-- --workers-stopped]: rebuilds the tracked addresses' activity
// counters in Redis from PostgreSQL's evaluated transactions after Redis lost them (flushed,
// replaced, restarted without its append-only file), firing nothing (src/pipeline/
// activity-reseed.ts). Run it with the evaluation workers stopped: it refuses while one is
// connected. Reads the worker's settings; prints a line per step and a summary; exits 1 with
// one line when anything fails. Safe to run again: each run rebuilds from nothing.
import { loadConfigOrExit } from "./config-or-exit.ts";
import { preflightOrExit } from "./preflight-or-exit.ts";
import { createDeps } from "../deps.ts";
import { reseedActivity } from "../pipeline/activity-reseed.ts";
import { PREFLIGHT_TIMEOUT_MS } from "../preflight.ts";
import { redactUrl } from "../redact-url.ts";

const WHO = "reseed-activity";
const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== "--workers-stopped");
if (unknown.length > 0) {
  console.error(`${WHO}: unknown argument ${unknown[0]} (the only one is --workers-stopped)`);
  process.exit(1);
}

const config = loadConfigOrExit({ worker: true });
const deps = createDeps(config);
// Settings that PostgreSQL or Redis refuse end it here, with the worker's one fatal line.
const reachable = await preflightOrExit(deps, WHO);
try {
  if (reachable.postgres !== "up") throw new Error(`PostgreSQL at ${redactUrl(config.databaseUrl)} did not answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s`);
  if (reachable.redis !== "up") throw new Error(`Redis at ${redactUrl(config.redisUrl)} did not answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s`);
  console.log(`${WHO}: rebuilding the activity counters under ${config.queuePrefix} from PostgreSQL`);
  const summary = await reseedActivity(deps, {
    workersStopped: args.includes("--workers-stopped"),
    progress: (line) => console.log(`${WHO}: ${line}`),
  });
  console.log(
    `${WHO}: done: ${summary.trackedAddresses} tracked addresses (${summary.countedAddresses} counted from the replayed days), ` +
      `${summary.batches} batches and ${summary.transactions} transactions replayed (${summary.events} events), ` +
      `${summary.counterpartySets} counterparty sets and ${summary.lastSends} newest sends from older history; the evaluation workers can start`,
  );
} catch (error) {
  console.error(`${WHO} failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await deps.close();
  // The verdict is out: nothing left half-closed may hold the exit (unref'd: idle, it exits at once).
  setTimeout(() => process.exit(), 100).unref();
}
