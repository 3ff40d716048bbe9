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
