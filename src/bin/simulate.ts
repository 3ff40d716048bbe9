// npm run simulate -- --rate 500 --wallets 1000 [--url http://127.0.0.1:$PORT] [--token <jwt> | JWT_SECRET set]
//                     [--sub simulator] [--duration 60s] [--seed 1] [--batch 250]
// The synthetic Solana feed on its own, against a running API through its public endpoints:
// tracks the wallets, labels the flagged counterparties, posts starting snapshots, then
// posts transactions at --rate per second, one line per second, until --duration has passed
// or Ctrl-C (a second Ctrl-C exits at once). Without --url it posts to the API that this
// shell's PORT and HOST would start (src/sim/default-url.ts).
import { randomInt } from "node:crypto";
import { parseArgs } from "node:util";
import { loadJwtConfig } from "../config.ts";
import { parseDuration } from "../duration.ts";
import { mintToken } from "../http/mint-token.ts";
import { onStopSignal } from "../signals.ts";
import { createApiClient } from "../sim/client.ts";
import { defaultApiUrl } from "../sim/default-url.ts";
import { createSnapshots } from "../sim/population.ts";
import { defaultBatchSize, runFeed } from "../sim/run.ts";
import { prepareSimulation } from "../sim/setup.ts";
import { fixedToken, mintedTokens, renewEveryMs, type TokenSource } from "../sim/tokens.ts";
import { createTrafficGenerator } from "../sim/traffic.ts";

const SCOPES = "wallets:write ingest:write risk:write";

function wholeNumber(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new Error(`--${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

function readOptions() {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      token: { type: "string" },
      sub: { type: "string", default: "simulator" },
      rate: { type: "string", default: "100" },
      wallets: { type: "string", default: "100" },
      duration: { type: "string" },
      seed: { type: "string" },
      batch: { type: "string" },
    },
  });
  const rate = wholeNumber("rate", values.rate, 1, 1_000_000)!;
  return {
    url: values.url ?? defaultApiUrl(process.env),
    token: values.token,
    sub: values.sub,
    rate,
    wallets: wholeNumber("wallets", values.wallets, 1, 1_000_000)!,
    durationMs: values.duration === undefined ? undefined : parseDuration(values.duration),
    seed: wholeNumber("seed", values.seed, 0, 2 ** 32 - 1) ?? randomInt(2 ** 32 - 1),
    batchSize: wholeNumber("batch", values.batch, 1, 1000) ?? defaultBatchSize(rate),
  };
}

/** A token the simulator mints lasts a week, unless the API's JWT_MAX_TOKEN_AGE refuses it sooner: it is minted again before either. */
const MINTED_TTL_SECONDS = 7 * 24 * 3600;

function resolveTokens(given: string | undefined, sub: string): TokenSource {
  if (given) return fixedToken(given);
  const jwt = loadJwtConfig();
  const { secret } = jwt;
  if (!secret) throw new Error("give --token <jwt>, or set JWT_SECRET to mint one");
  const mint = () => mintToken(secret, { sub, scope: SCOPES, ttlSeconds: MINTED_TTL_SECONDS }, jwt);
  return mintedTokens(mint, renewEveryMs(MINTED_TTL_SECONDS * 1000, jwt.maxTokenAgeMs));
}

async function main(signal: AbortSignal): Promise<void> {
  const options = readOptions();
  const tokens = resolveTokens(options.token, options.sub);
  const client = createApiClient({ baseUrl: options.url, token: tokens.current });
  try {
    const generator = createTrafficGenerator({
      seed: options.seed,
      wallets: options.wallets,
      now: () => new Date(),
      // Same seed, same wallets and labels; every run's transactions are new all the same.
      stream: Date.now(),
    });
    const { population } = generator;
    console.log(
      `simulating ${options.wallets} wallets at ${options.rate} tx/s in batches of ${options.batchSize} ` +
        `against ${options.url} (seed ${options.seed}${options.durationMs ? `, for ${options.durationMs / 1000}s` : ", until Ctrl-C"})`,
    );
    const report = (line: string) => console.log(line);
    await prepareSimulation({ client, population, snapshots: createSnapshots(options.seed, population), report, signal });
    if (signal.aborted) return;
    const stats = await runFeed({
      client,
      generator,
      rate: options.rate,
      batchSize: options.batchSize,
      durationMs: options.durationMs,
      signal,
      report,
      tokens,
    });
    console.log(
      `done: sent=${stats.sent} accepted=${stats.accepted} duplicates=${stats.duplicates} errors=${stats.errors} behind=${stats.behind}`,
    );
  } finally {
    await client.close();
  }
}

const controller = new AbortController();
let exitCode = 0;
const finished = main(controller.signal).catch((error: unknown) => {
  console.error(`simulate: ${(error as Error).message}`);
  exitCode = 1;
});
onStopSignal(
  async () => {
    controller.abort();
    await finished;
  },
  (message) => console.error(message),
  (code) => process.exit(exitCode || code),
);
await finished;
process.exit(exitCode);
