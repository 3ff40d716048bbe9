// The `maintenance` queue: the reconciler's sweep, run by its job scheduler every 30 s.
import type { Job } from "bullmq";
import { runReconcileOnce, type ReconcileDeps, type ReconcileResult } from "../../pipeline/reconcile.ts";

export function makeReconcileProcessor(deps: ReconcileDeps): (job: Job) => Promise<ReconcileResult> {
  return () => runReconcileOnce(deps);
}
