// Score changes owed an evaluation go to the `risk` queue in chunks. The jobId names the
// chunk's id range, so the same chunk enqueued twice (the label route, then the reconciler)
// is one job while it lives in Redis; a second job for the same changes would be harmless
// anyway: evaluation locks the rows and skips the ones already evaluated.
import { JOB_RETENTION, QUEUES, type EvaluateRiskJob } from "../queue/names.ts";
import type { Queues } from "../queue/producers.ts";

const CHANGES_PER_JOB = 500;

export async function enqueueScoreEvaluation(queues: Queues, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const sorted = [...ids].sort((a, b) => a - b);
  const jobs = [];
  for (let start = 0; start < sorted.length; start += CHANGES_PER_JOB) {
    const chunk = sorted.slice(start, start + CHANGES_PER_JOB);
    const data: EvaluateRiskJob = { scoreChangeIds: chunk };
    jobs.push({
      name: "evaluate-risk",
      data,
      opts: { ...JOB_RETENTION, jobId: `risk-${chunk[0]}-${chunk.at(-1)}` },
    });
  }
  await queues[QUEUES.risk].addBulk(jobs);
}
