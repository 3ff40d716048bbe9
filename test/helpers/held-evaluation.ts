// An evaluation stopped after its reads (labels, alerts, the scores it builds on) and before
// its writes: an earlier batch that another evaluation holds (counted, not yet committed)
// keeps it waiting until `release`. For tests of what commits meanwhile.
import { flagCountedBatches } from "../../src/pipeline/activity.ts";
import { evaluateBatch, type BatchOutcome } from "../../src/pipeline/evaluate-batch.ts";
import type { TestApp } from "./app.ts";
import { holdTransaction } from "./held-transaction.ts";
import { waitFor } from "./wait.ts";

/** The advisory-lock namespace of batch claims (pipeline-writes.ts). */
const BATCH_CLAIMS = 0x62617463;

/** Evaluates `batch` behind `ahead` (stored before it), which another evaluation holds until `release`. */
export async function evaluateBehindHeldBatch(
  t: TestApp,
  ahead: string,
  batch: string,
): Promise<{ evaluation: Promise<BatchOutcome>; release: () => Promise<void> }> {
  await flagCountedBatches(t.deps.redis, t.config.queuePrefix, [ahead]);
  const release = await holdTransaction(t.deps.sql, async (sql) => {
    await sql`select pg_advisory_xact_lock(${BATCH_CLAIMS}, hashtext(${ahead}))`;
    await sql`update ingest_batches set evaluated_at = now() where id = ${ahead}`;
  });
  const evaluation = evaluateBatch(t.deps, batch);
  // Counted in this test's database only: pg_locks is the whole cluster's, where other test
  // files' evaluations claim batches too (an advisory lock's `database` is its database's oid).
  await waitFor("the evaluation to claim its batch", async () =>
    (
      await t.deps.sql`select 1 from pg_locks
                       where locktype = 'advisory' and granted and classid = ${BATCH_CLAIMS}
                         and database = (select oid from pg_database where datname = current_database())`
    ).length >= 2,
  );
  return { evaluation, release };
}
