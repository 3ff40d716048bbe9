// The notice job: tell the owner that their alert was disabled (notify/alert-health.ts). It
// reads the alert when it runs, so a notice still waiting for its retry goes to the address
// stored by then, and is dropped once the owner has re-enabled or deleted the alert (they know),
// or once the alert is disabled by a later disabling than its own (alerts.disabled_at): that
// one has its own notice, and the owner is told once. A job queued before notices were dated
// (no disabledAt) is judged by the status alone.
// A refusal of the address (SMTP 5xx) ends it; anything worth another try (4xx, the server out
// of reach) is thrown for BullMQ to retry on the schedule (disabled-notices.ts).
// Every end but a retry settles the notice in Postgres (alerts.disabled_notice_owed), before the
// job ends: until then the reconciler queues it again if Redis loses the job. A notice whose
// sending went through but whose settling failed is sent again: at least once, as deliveries.
import { UnrecoverableError, type Job } from "bullmq";
import type { Sql } from "../../db/client.ts";
import { loadNoticeFacts, settleDisabledNotice } from "../../db/queries/disabled-notices.ts";
import { withRecipientsMasked } from "../../domain/recipient-mask.ts";
import type { Logger } from "../../logger.ts";
import { noticeAddress } from "../../notify/alert-health.ts";
import type { EmailChannel } from "../../notify/channels/index.ts";
import { renderDisabledNotice, walletName } from "../../notify/render.ts";
import { classifyOutcome } from "../../notify/retry-policy.ts";
import type { DisabledNoticeJob } from "../names.ts";

export type DisabledNoticeDeps = { sql: Sql; logger: Logger; email: EmailChannel };

/** Said when disabled_reason is missing (it is set with the status; a hand-edited row may lack it). */
const UNKNOWN_REASON = "its notifications kept failing";

export function makeDisabledNoticeProcessor(deps: DisabledNoticeDeps): (job: Job<DisabledNoticeJob>) => Promise<void> {
  return async (job) => {
    const { alertId, disabledAt } = job.data;
    const settle = () => settleDisabledNotice(deps.sql, alertId, disabledAt);
    const alert = await loadNoticeFacts(deps.sql, alertId);
    if (alert?.status !== "disabled") {
      deps.logger.info({ alertId }, "notice of a disabled alert not sent: the alert was re-enabled or deleted meanwhile");
      return settle();
    }
    if (disabledAt !== undefined && alert.disabledAt !== disabledAt) {
      deps.logger.info(
        { alertId: alert.alertId, disabledAt: new Date(disabledAt).toISOString() },
        "notice of a disabled alert not sent: the alert was re-enabled and disabled again since, and that disabling has its own notice",
      );
      return;
    }
    const to = noticeAddress(alert);
    if (to === undefined) {
      deps.logger.warn({ alertId: alert.alertId, owner: alert.owner }, "alert disabled; no email address known for its owner");
      return settle();
    }
    const notice = renderDisabledNotice({
      alertId: alert.alertId,
      condition: alert.condition,
      walletName: walletName(alert),
      address: alert.address,
      reason: alert.disabledReason ?? UNKNOWN_REASON,
      channel: alert.notificationMethod,
      destination: alert.notificationMethod === "webhook" ? alert.webhookUrl : alert.recipient,
    });
    const result = await deps.email.sendMail(to, notice);
    const verdict = classifyOutcome(result);
    if (verdict === "delivered") return settle();

    // The SMTP server's words name the owner's address it refused: masked for the log and the
    // job's failedReason (domain/recipient-mask.ts). A notice keeps no attempt record of its own.
    const error = withRecipientsMasked(result.error ?? "not sent", to);
    const attempts = job.attemptsMade + 1;
    if (verdict === "permanent" || attempts >= (job.opts.attempts ?? 1)) {
      deps.logger.warn(
        { alertId: alert.alertId, owner: alert.owner, attempts, error },
        "gave up telling the owner of a disabled alert by email",
      );
      await settle();
      throw new UnrecoverableError(error);
    }
    throw new Error(error);
  };
}
