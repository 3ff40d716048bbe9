// Queue names and the payload each job carries. Payloads hold ids only: Postgres has the
// facts, so a job lost from Redis can be rebuilt from the rows it points at.
import type { NotificationMethod } from "../domain/types.ts";

export const QUEUES = {
  /** One job per ingest batch: evaluate its transactions against every alert. */
  transactions: "transactions",
  /** One job per batch of risk-score changes: evaluate risk_score_increase alerts. */
  risk: "risk",
  deliverWebhook: "deliver-webhook",
  deliverEmail: "deliver-email",
  deliverSms: "deliver-sms",
  /** The reconciler's schedule (outbox sweep). */
  maintenance: "maintenance",
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
export const ALL_QUEUES: readonly QueueName[] = Object.values(QUEUES);

export const DELIVERY_QUEUE: Readonly<Record<NotificationMethod, QueueName>> = {
  webhook: QUEUES.deliverWebhook,
  email: QUEUES.deliverEmail,
  sms: QUEUES.deliverSms,
};

export type EvaluateBatchJob = { batchId: string };
/**
 * An evaluation job gets BullMQ's retries, as deliveries and risk jobs do (queue/deliveries.ts):
 * 1, 2, 4, 8 and 16 s. What fails one is PostgreSQL or Redis away for a moment (a dropped
 * connection, a restart); with one attempt, its batch waited for the reconciler's next sweep
 * (every 30 s) or a later batch's job: on a quiet feed, an alert 30 s late after a one-second
 * blip. Running again is harmless: a batch's events, scores and "evaluated" mark commit in the
 * transaction that holds its claim (a failed run left none of them, and let the claim go), the
 * activity it counted in Redis is not counted again (activity.ts), and a batch that another job
 * evaluated or holds meanwhile ends the run at once (evaluate-batch.ts). A job whose attempts
 * are spent is left failed: the reconciler's next sweep runs it again.
 */
export const EVALUATE_JOB_OPTIONS = {
  attempts: 6,
  backoff: { type: "exponential", delay: 1_000 },
} as const;

export type EvaluateRiskJob = { scoreChangeIds: number[] };
export type DeliverJob = { notificationId: string };
/**
 * On the email queue beside the deliveries, under its own job name: tell the owner that the
 * alert was disabled. The one payload with no row behind it: a Redis flush loses it.
 * `disabledAt` (epoch ms, as in the jobId) is the disabling it tells of (alerts.disabled_at);
 * jobs queued before it existed lack it.
 */
export type DisabledNoticeJob = { alertId: string; disabledAt?: number };

/** Finished jobs leave Redis; Postgres keeps the history. */
export const JOB_RETENTION = {
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 10000 },
} as const;
