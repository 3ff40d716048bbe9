// The email queue carries two kinds of job: deliveries of notification rows ("deliver") and
// notices to the owners of disabled alerts ("disabled-notice"), which have no row. Routed by
// job name, so a notice never reaches the delivery path (which would find no row and drop it).
import type { Job } from "bullmq";
import { DISABLED_NOTICE_JOB } from "../disabled-notices.ts";
import type { DeliverJob, DisabledNoticeJob } from "../names.ts";
import { makeDeliverProcessor, type DeliverDeps } from "./deliver.ts";
import { makeDisabledNoticeProcessor } from "./disabled-notice.ts";

export function makeEmailQueueProcessor(
  deps: DeliverDeps,
): (job: Job<DeliverJob> | Job<DisabledNoticeJob>, token?: string) => Promise<void> {
  const deliver = makeDeliverProcessor(deps, "email");
  const notice = makeDisabledNoticeProcessor({ sql: deps.sql, logger: deps.logger, email: deps.channels.email });
  return (job, token) =>
    job.name === DISABLED_NOTICE_JOB ? notice(job as Job<DisabledNoticeJob>) : deliver(job as Job<DeliverJob>, token);
}
