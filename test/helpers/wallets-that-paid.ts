// The population of the label-rescore tests: tracked wallets that each paid one hub once,
// evaluated, so that labelling the hub owes each of them a rescore.
import { compareBytewise } from "../../src/db/queries/risk-labels.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import type { TestApp } from "./app.ts";
import { track, tx } from "./pipeline.ts";

// Each payment a second after the one before, across every call in a test file.
let clock = Math.floor(Date.now() / 1000);

/** `count` tracked wallets of `owner` (a token) that each paid `hub` once, evaluated (all scored 0), in address order. */
export async function walletsThatPaid(t: TestApp, owner: string, hub: string, count: number): Promise<string[]> {
  const wallets: string[] = [];
  for (let i = 0; i < count; i++) wallets.push((await track(t, owner)).address);
  const { batchId } = await storeTransactionBatch(
    t.deps,
    wallets.map((address) => tx({ from: address, to: hub, amount: 1, blockTime: clock++ })),
  );
  await evaluateBatch(t.deps, batchId!);
  return wallets.sort(compareBytewise);
}
