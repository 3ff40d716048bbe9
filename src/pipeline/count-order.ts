// Batches are counted in ingest order. The activity counters decide `unusual_activity`'s edge
// and the behavioural factors, and a count is only right if every earlier transaction of the
// address is in it: were two evaluations to count neighbouring batches the other way round,
// a burst split across them could miss its edge altogether. Each evaluation claims one
// unbroken run of open batches (claimBatchGroup); before counting it, it waits until the
// earlier batches that other evaluations hold are counted (their flag in Redis) or evaluated
// (Postgres). Should one of them be let go uncounted (its evaluation failed or its process
// died), the run is given up and claimed afresh, now with that batch in it. An evaluation that
// hangs while holding batches is waited for EVALUATION_ORDER_WAIT at most: then its batches
// are flagged as if counted, so that neither this run nor any later one waits for them again
// (they will be counted out of order: the price of not stopping every alert behind them).
import type { Deps } from "../deps.ts";
import { isBatchClaimed } from "../db/queries/pipeline-writes.ts";
import { openBatchesAmong } from "../db/queries/pipeline.ts";
import { flagCountedBatches, flaggedCountedBatches } from "./activity.ts";

/** An earlier batch was let go uncounted: the run must be claimed again. */
export class EarlierBatchReleased extends Error {
  constructor(readonly batchId: string) {
    super(`batch ${batchId}, ahead of this run, was let go before it was counted`);
  }
}

export type CountOrderDeps = Pick<Deps, "sql" | "redis" | "logger"> & {
  config: Pick<Deps["config"], "queuePrefix" | "evaluationOrderWaitMs">;
};

/** Redis's flags are checked this often; Postgres (evaluated? still claimed?) every tenth time. */
const POLL_MS = 5;
const POSTGRES_EVERY = 10;

export async function waitForEarlierCounts(deps: CountOrderDeps, earlier: readonly string[]): Promise<void> {
  const { redis, sql, config } = deps;
  const deadline = Date.now() + config.evaluationOrderWaitMs;
  let waiting = [...earlier];
  for (let poll = 0; waiting.length > 0; poll++) {
    const counted = await flaggedCountedBatches(redis, config.queuePrefix, waiting);
    waiting = waiting.filter((batchId) => !counted.has(batchId));
    if (waiting.length > 0 && poll % POSTGRES_EVERY === 0) {
      waiting = await openBatchesAmong(sql, waiting);
      for (const batchId of waiting) {
        if (!(await isBatchClaimed(sql, batchId))) throw new EarlierBatchReleased(batchId);
      }
    }
    if (waiting.length > 0 && Date.now() >= deadline) {
      deps.logger.warn(
        { batchIds: waiting, waitedMs: config.evaluationOrderWaitMs },
        "evaluate: earlier batches held by another evaluation are still not counted; counting without them (they will count out of order)",
      );
      await flagCountedBatches(redis, config.queuePrefix, waiting);
      return;
    }
    if (waiting.length > 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
