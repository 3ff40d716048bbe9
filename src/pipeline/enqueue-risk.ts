// Score changes owed an evaluation go to the `risk` queue in chunks. The jobId names the
// chunk's id range, so the same chunk enqueued twice (the label route, then the reconciler)
// is one job while it lives in Redis; a second job for the same changes would be harmless
// anyway: evaluation locks the rows and skips the ones already evaluated.
import { JOB_RETENTION, QUEUES, type EvaluateRiskJob } from "../queue/names.ts";
import type { Queues } from "../queue/producers.ts";

const CHANGES_PER_JOB = 500;

/**
 * BullMQ retries a failed risk job after 1, 2, 4, 8 and 16 s, as it does a delivery job
 * (queue/deliveries.ts): what fails a risk job is infrastructure (Postgres away through a
 * failover or restart), and a job is cheap to run again since its changes are marked
 * evaluated in the transaction that records their events. So a short outage delays
 * risk_score_increase alerts by seconds rather than until the reconciler's next sweep
 * (30 s, plus its grace period), which still starts afresh a job whose attempts ran out.
 */
export const RISK_JOB_OPTIONS = {
  attempts: 6,
  backoff: { type: "exponential", delay: 1_000 },
} as const;

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
