// The `maintenance` queue: the reconciler's sweep, run by its job scheduler every 30 s, and
// beside it the drop of expired replaced webhook secrets (at most every 10 minutes).
import type { Job } from "bullmq";
import { runReconcileOnce, type ReconcileDeps, type ReconcileResult } from "../../pipeline/reconcile.ts";
import { sweepExpiredSecrets } from "../expired-secrets-sweep.ts";

export function makeReconcileProcessor(deps: ReconcileDeps): (job: Job) => Promise<ReconcileResult> {
  return async () => {
    // Side by side, each waited for: either failing fails the job, but neither keeps the other
    // from its work, and the job does not end while one still runs.
    const [reconciled, secrets] = await Promise.allSettled([runReconcileOnce(deps), sweepExpiredSecrets(deps)]);
    if (reconciled.status === "rejected") throw reconciled.reason;
    if (secrets.status === "rejected") throw secrets.reason;
    return reconciled.value;
  };
}
