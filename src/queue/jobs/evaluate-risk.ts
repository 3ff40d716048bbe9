// The `risk` queue: score changes no batch evaluated (label changes), a chunk per job.
import type { Job } from "bullmq";
import type { PipelineDeps } from "../../pipeline/evaluate-batch.ts";
import { evaluateScoreChanges, type RiskOutcome } from "../../pipeline/evaluate-risk.ts";
import type { EvaluateRiskJob } from "../names.ts";

export function makeEvaluateRiskProcessor(deps: PipelineDeps): (job: Job<EvaluateRiskJob>) => Promise<RiskOutcome> {
  return (job) => evaluateScoreChanges(deps, job.data.scoreChangeIds);
}
