// The `transactions` queue: one job per ingest batch (never one per transaction).
import type { Job } from "bullmq";
import { evaluateBatch, type BatchOutcome, type PipelineDeps } from "../../pipeline/evaluate-batch.ts";
import type { EvaluateBatchJob } from "../names.ts";

export function makeEvaluateBatchProcessor(deps: PipelineDeps): (job: Job<EvaluateBatchJob>) => Promise<BatchOutcome> {
  return (job) => evaluateBatch(deps, job.data.batchId);
}
