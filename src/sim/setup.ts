// Before the feed starts: the caller tracks the simulated wallets, the counterparty labels
// are loaded and each wallet gets a starting snapshot (balance, tokens, NFTs). All of it is
// idempotent, so a second run with the same seed finds everything in place.
import type { ApiClient } from "./client.ts";
import type { AccountSnapshot, Population } from "./population.ts";

export type SetupOptions = {
  client: Pick<ApiClient, "trackWallet" | "putLabels" | "postAccounts">;
  population: Population;
  snapshots: readonly AccountSnapshot[];
  report: (line: string) => void;
  signal: AbortSignal;
  /** Wallet creations in flight at once. */
  concurrency?: number;
};

const CHUNK = 500;

export async function prepareSimulation(options: SetupOptions): Promise<{ created: number; existing: number }> {
  const { client, population, report, signal } = options;
  const wallets = population.wallets;
  let created = 0;
  let existing = 0;
  let nextIndex = 0;
  let nextProgress = 0.25;
  const worker = async () => {
    while (nextIndex < wallets.length && !signal.aborted) {
      const index = nextIndex++;
      const outcome = await client.trackWallet({ address: wallets[index]!, alias: `sim-${index + 1}`, tags: ["simulated"] });
      if (outcome === "created") created++;
      else existing++;
      const done = created + existing;
      // Progress only where it takes a while (many wallets, or waiting out the rate limit).
      if (wallets.length >= 500 && done / wallets.length >= nextProgress && done < wallets.length) {
        report(`tracking wallets: ${done}/${wallets.length}`);
        nextProgress += 0.25;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, wallets.length) }, worker));
  if (signal.aborted) return { created, existing };
  report(`tracking ${wallets.length} wallets (${created} new, ${existing} already tracked)`);

  for (const labels of chunks(population.labels, CHUNK)) await client.putLabels(labels);
  const flagged = population.flagged.length;
  report(`labelled ${population.labels.length} counterparties (${flagged} flagged, the rest exchanges and DEX pools)`);

  for (const accounts of chunks(options.snapshots, CHUNK)) {
    if (signal.aborted) break;
    await client.postAccounts(accounts);
  }
  report(`posted starting snapshots of ${options.snapshots.length} wallets`);
  return { created, existing };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
