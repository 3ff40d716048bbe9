// Score changes owed an evaluation go to the `risk` queue in chunks. The jobId names the
// chunk's id range, so the same chunk enqueued twice (the label route, then the reconciler)
// is one job while it lives in Redis; a second job for the same changes would be harmless
// anyway: evaluation locks the rows and skips the ones already evaluated.
import { JOB_RETENTION, QUEUES, type EvaluateRiskJob } from "../queue/names.ts";
import { DELIVER_JOB_OPTIONS } from "../queue/deliveries.ts";
import type { Queues } from "../queue/producers.ts";

const CHANGES_PER_JOB = 500;

/**
 * A risk job gets the delivery jobs' infrastructure retries (queue/deliveries.ts): what fails
 * one is Postgres away through a failover or restart, and running it again is safe since its
 * changes are marked evaluated in the transaction that records their events. So a short
 * outage delays risk_score_increase alerts by seconds rather than until the reconciler's next
 * sweep (30 s, plus its grace period), which still starts afresh a job whose attempts ran out.
 */
export const RISK_JOB_OPTIONS = DELIVER_JOB_OPTIONS;

export type ScoreEvaluationJob = {
  name: "evaluate-risk";
  data: EvaluateRiskJob;
  opts: typeof JOB_RETENTION & typeof RISK_JOB_OPTIONS & { jobId: string };
};

/** The jobs for `ids`: chunks in id order, each named by its first and last id. */
export function scoreEvaluationJobs(ids: readonly number[]): ScoreEvaluationJob[] {
  const sorted = [...ids].sort((a, b) => a - b);
  const jobs: ScoreEvaluationJob[] = [];
  for (let start = 0; start < sorted.length; start += CHANGES_PER_JOB) {
    const chunk = sorted.slice(start, start + CHANGES_PER_JOB);
    jobs.push({
      name: "evaluate-risk",
      data: { scoreChangeIds: chunk },
      opts: { ...JOB_RETENTION, ...RISK_JOB_OPTIONS, jobId: `risk-${chunk[0]}-${chunk.at(-1)}` },
    });
  }
  return jobs;
}

export async function enqueueScoreEvaluation(queues: Queues, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await queues[QUEUES.risk].addBulk(scoreEvaluationJobs(ids));
}
