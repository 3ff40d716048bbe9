// Batches are counted in ingest order. The activity counters decide `unusual_activity`'s edge
// and the behavioural factors, and a count is only right if every earlier transaction of the
// address is in it: were two evaluations to count neighbouring batches the other way round,
// a burst split across them could miss its edge altogether. Each evaluation claims one
// unbroken run of open batches (claimBatchGroup); before counting it, it waits until the
// earlier batches that other evaluations hold are counted (their flag in Redis) or evaluated
// (Postgres). Should one of them be let go uncounted (its evaluation failed or its process
// died), the run is given up and claimed afresh, now with that batch in it. An evaluation that
// hangs while holding batches is waited for EVALUATION_ORDER_WAIT at most: then its batches
// are flagged as passed, so that neither this run nor any later one waits for them again
// (they will be counted out of order: the price of not stopping every alert behind them).
//
// Scores follow the same order: a run reads the stored scores (a counterparty's risk, the
// score a change starts from) only once the earlier batches others hold have committed, or
// it would judge a counterparty by the score it had before them.
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
  await waitForBatches(deps, earlier, "counted; counting without them (they will count out of order)", async (waiting, poll) => {
    const { flagged } = await flaggedCountedBatches(redis, config.queuePrefix, waiting);
    let left = waiting.filter((batchId) => !flagged.has(batchId));
    if (left.length > 0 && poll % POSTGRES_EVERY === 0) {
      left = await openBatchesAmong(sql, left);
      for (const batchId of left) {
        if (!(await isBatchClaimed(sql, batchId))) throw new EarlierBatchReleased(batchId);
      }
    }
    return left;
  });
}

/**
 * Waits until the earlier batches other evaluations hold have committed: let go without a
 * commit (failed, or their process died: nothing will commit them soon), passed over once
 * already, or waited for EVALUATION_ORDER_WAIT (then passed: none waits for them again).
 */
export async function waitForEarlierEvaluations(deps: CountOrderDeps, earlier: readonly string[]): Promise<void> {
  const { redis, sql, config } = deps;
  await waitForBatches(deps, earlier, "committed; reading scores without them", async (waiting, poll) => {
    const open = await openBatchesAmong(sql, waiting);
    if (open.length === 0 || poll % POSTGRES_EVERY !== 0) return open;
    const { passed } = await flaggedCountedBatches(redis, config.queuePrefix, open);
    const held: string[] = [];
    for (const batchId of open) if (!passed.has(batchId) && (await isBatchClaimed(sql, batchId))) held.push(batchId);
    return held;
  });
}

/**
 * Polls `stillWaited` (the batches of `waiting` still to wait for) every POLL_MS until none is
 * left; after EVALUATION_ORDER_WAIT, those left are flagged as passed (none waits for them
 * again) and a warning says what they are not yet and what the evaluation does without them.
 */
async function waitForBatches(
  deps: CountOrderDeps,
  earlier: readonly string[],
  /** What the batches are not yet, and what the evaluation does without them. */
  notYet: string,
  stillWaited: (waiting: string[], poll: number) => Promise<string[]>,
): Promise<void> {
  const { config } = deps;
  const deadline = Date.now() + config.evaluationOrderWaitMs;
  let waiting = [...earlier];
  for (let poll = 0; waiting.length > 0; poll++) {
    waiting = await stillWaited(waiting, poll);
    if (waiting.length === 0) return;
    if (Date.now() >= deadline) {
      deps.logger.warn(
        { batchIds: waiting, waitedMs: config.evaluationOrderWaitMs },
        `evaluate: earlier batches held by another evaluation are still not ${notYet}`,
      );
      await flagCountedBatches(deps.redis, config.queuePrefix, waiting, true);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
