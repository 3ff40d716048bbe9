// The reconciler (the outbox sweep): Postgres says what work is owed, Redis may have lost the
// jobs for it (a flush, a new Redis, an enqueue that failed after a commit). It also does
// itself the one kind of owed work that has no job: a label change's rescore (relabel.ts). It also
// queues the notices still owed to the owners of disabled alerts. Each sweep
// re-enqueues with the same jobIds as the first enqueue, so work whose job is alive is left
// alone and nothing runs twice at once. BullMQ also ignores an add whose jobId is kept as
// failed or completed, so for those each kind removes or retries the old job (jobStates).
import type { Queue } from "bullmq";
import type { Deps } from "../deps.ts";
import { openNotifications, unevaluatedBatches, unevaluatedScoreChanges, type OpenNotification } from "../db/queries/reconcile.ts";
import { enqueueDeliveries } from "../queue/deliveries.ts";
import { disabledNoticeJobId, enqueueDisabledNotice } from "../queue/disabled-notices.ts";
import { owedAmong, owedDisabledNotices } from "../db/queries/disabled-notices.ts";
import { DELIVERY_QUEUE, EVALUATE_JOB_OPTIONS, QUEUES, type EvaluateBatchJob } from "../queue/names.ts";
import { pendingLabelRescores } from "../db/queries/risk-labels.ts";
import { scoreEvaluationJobs } from "./enqueue-risk.ts";
import { rescoreRelabelled } from "./relabel.ts";
import { idTime } from "../ids.ts";
import { redisNowMs } from "../redis.ts";
import type { Queues } from "../queue/producers.ts";

export type ReconcileOptions = {
  /** Work younger than this is left to its first enqueue (which normally follows the commit at once). */
  graceMs: number;
  /** Rows read per page. */
  pageSize: number;
  /** Pages per kind per sweep (a bound on one sweep's work); the next sweep continues where it stopped. */
  maxPages: number;
  /** An open notification whose job completed is re-run once its row has not moved for this long. */
  stuckMs: number;
};

export const RECONCILE_DEFAULTS: ReconcileOptions = { graceMs: 5_000, pageSize: 1_000, maxPages: 50, stuckMs: 10 * 60_000 };

export type ReconcileResult = {
  batches: number;
  labelRescores: number;
  scoreChanges: number;
  notifications: number;
  disabledNotices: number;
};

export type ReconcileDeps = Pick<Deps, "sql" | "redis" | "queues" | "logger" | "now"> & {
  config: Pick<Deps["config"], "queuePrefix" | "retryScheduleMs">;
};

/**
 * Where each kind's sweep stopped, in Redis: the sweep runs on whichever worker takes the
 * scheduled job, so a cursor in one process's memory would restart from the oldest rows on
 * every other one. Losing it (a flush, the TTL) only means starting again from the first row.
 */
type SweepKind = "batches" | "notifications";
// Sweeps come every 30 s; the TTL only keeps the key of a prefix nobody sweeps any more from staying forever.
const CURSOR_TTL_SECONDS = 3_600;
const cursorKey = (prefix: string, kind: SweepKind) => `${prefix}:reconcile-cursor:${kind}`;

/**
 * When the last sweep finished, in Redis under the maintenance queue's keys: read by the API's
 * /metrics (wallet_alerts_reconcile_last_sweep_timestamp_seconds), so that sweeps that stop (a
 * schedule set by a clock that was ahead, no worker serving `maintenance`, every sweep failing)
 * show. Redis rather than PostgreSQL: it is where the schedule and its jobs live, written
 * without a transaction, and read by the same scrape as the queue counts. Stamped with Redis's
 * clock: a worker whose clock is ahead would stamp a sweep in the future, and the gauge would
 * read "swept just now" for as long as its skew.
 */
export const lastSweepKey = (queues: Queues): string => queues[QUEUES.maintenance].toKey("reconcile-last-sweep");

async function recordSweep(deps: ReconcileDeps): Promise<void> {
  await deps.redis.set(lastSweepKey(deps.queues), String(await redisNowMs(deps.redis)));
}

export async function runReconcileOnce(
  deps: ReconcileDeps,
  options: Partial<ReconcileOptions> = {},
): Promise<ReconcileResult> {
  const settings = { ...RECONCILE_DEFAULTS, ...options };
  const now = deps.now();
  const before = new Date(now.getTime() - settings.graceMs);
  const result: ReconcileResult = { batches: 0, labelRescores: 0, scoreChanges: 0, notifications: 0, disabledNotices: 0 };

  const batchQueue = deps.queues[QUEUES.transactions];
  await forEachPage(deps, "batches", settings, (after) => unevaluatedBatches(deps.sql, before, after, settings.pageSize), (id) => id, async (ids) => {
    // Only a batch open for stuckMs is looked for in the lists (a backlog's live jobs wait there
    // normally, and reading long lists every sweep would load Redis for nothing); a batch whose
    // job is lost is also evaluated meanwhile by the next batch's job, which takes the oldest.
    const states = await jobStates(deps, batchQueue, ids, (id) => now.getTime() - idTime(id) > settings.stuckMs);
    // A job waiting for its retry (delayed) is live: left alone, like a waiting or active one.
    const data = (batchId: string): EvaluateBatchJob => ({ batchId });
    const opts = (batchId: string) => ({ ...EVALUATE_JOB_OPTIONS, jobId: batchId });
    const missing = ids.filter((id) => states.get(id) === "missing");
    await batchQueue.addBulk(missing.map((batchId) => ({ name: "evaluate", data: data(batchId), opts: opts(batchId) })));
    result.batches += missing.length;
    for (const batchId of ids) {
      // A job that failed (Postgres or Redis down through its attempts) or ended without recording
      // runs again. A failed one with its retries afresh: with its spent attempts still counted, a
      // blip during the re-run would leave the batch to the next sweep again.
      const state = states.get(batchId);
      const afresh = { resetAttemptsMade: true, resetAttemptsStarted: true };
      if (state === "failed") await (await batchQueue.getJob(batchId))?.retry("failed", afresh);
      if (state === "completed" || state === "orphaned") {
        await batchQueue.remove(batchId);
        await batchQueue.add("evaluate", data(batchId), opts(batchId));
      }
      if (state === "failed" || state === "completed" || state === "orphaned") result.batches++;
    }
  });

  // Label changes whose rescore their process never ran (it ended between the two steps), or
  // left unfinished: continued after the last chunk that committed (relabel.ts).
  for (const rescoreId of await pendingLabelRescores(deps.sql, before, settings.pageSize)) {
    await rescoreRelabelled(deps, rescoreId, undefined, before);
    result.labelRescores++;
  }

  const riskQueue = deps.queues[QUEUES.risk];
  const changeIds = await unevaluatedScoreChanges(deps.sql, before, settings.pageSize * settings.maxPages);
  const riskJobs = scoreEvaluationJobs(changeIds);
  const riskStates = await jobStates(deps, riskQueue, riskJobs.map((job) => job.opts.jobId));
  const owedRiskJobs = riskJobs.filter((job) => riskStates.get(job.opts.jobId) !== "live");
  for (const job of owedRiskJobs) {
    // Failed (its attempts ran out) or completed while its changes stay unevaluated (say,
    // its commit lost in a failover): an add under its jobId would be ignored, so afresh.
    // Not retried in place: a chunk with the same first and last id may hold other changes.
    if (riskStates.get(job.opts.jobId) !== "missing") await riskQueue.remove(job.opts.jobId);
  }
  await riskQueue.addBulk(owedRiskJobs);
  result.scoreChanges = owedRiskJobs.reduce((sum, job) => sum + job.data.scoreChangeIds.length, 0);

  await forEachPage(
    deps,
    "notifications",
    settings,
    (after) => openNotifications(deps.sql, before, after, settings.pageSize),
    (n) => n.id,
    async (page) => {
      const owed: OpenNotification[] = [];
      for (const channel of ["webhook", "email", "sms"] as const) {
        const rows = page.filter((n) => n.channel === channel);
        if (rows.length === 0) continue;
        const queue = deps.queues[DELIVERY_QUEUE[channel]];
        const stuckIds = new Set(rows.filter((n) => now.getTime() - n.updatedAtMs > settings.stuckMs).map((n) => n.id));
        // Only a row that has not moved for stuckMs is doubted: a live job of a fresh one is running or due.
        const states = await jobStates(deps, queue, rows.map((n) => n.id), (id) => stuckIds.has(id));
        for (const row of rows) {
          const state = states.get(row.id);
          const stuck = stuckIds.has(row.id);
          if (state === "live" || (state === "completed" && !stuck)) continue;
          // Failed (its infrastructure attempts ran out) or ended while the row stayed open: afresh.
          if (state !== "missing") await queue.remove(row.id);
          owed.push(row);
        }
      }
      // Ranked in their owners' bursts like a first enqueue: after a Redis flush, one caller's
      // thousands of owed notifications do not hold back everyone else's few.
      await enqueueDeliveries(deps.queues, owed.map((n) => ({ notificationId: n.id, channel: n.channel, owner: n.owner })), deps.redis);
      result.notifications += owed.length;
    },
  );

  // Few at any time (alerts disabled and not yet told), so one page, without a cursor.
  const notices = await owedDisabledNotices(deps.sql, before, settings.pageSize);
  const noticeQueue = deps.queues[QUEUES.deliverEmail];
  const noticeStates = await jobStates(deps, noticeQueue, notices.map(disabledNoticeJobId));
  const jobless = notices.filter((notice) => noticeStates.get(disabledNoticeJobId(notice)) !== "live");
  // Read again after the job states: a job that sent its notice, settled it and completed
  // between the first read and the states would otherwise be queued afresh, and send it twice.
  const stillOwed = await owedAmong(deps.sql, jobless.map((notice) => notice.alertId));
  for (const notice of jobless.filter((candidate) => stillOwed.has(candidate.alertId))) {
    const state = noticeStates.get(disabledNoticeJobId(notice));
    // Failed or completed while still owed (its settling never committed): afresh.
    if (state !== "missing") await noticeQueue.remove(disabledNoticeJobId(notice));
    await enqueueDisabledNotice(deps.queues, deps.config.retryScheduleMs, notice);
    result.disabledNotices++;
  }

  if (Object.values(result).some((count) => count > 0)) {
    deps.logger.info(result, "reconciler re-enqueued owed work");
  }
  await recordSweep(deps);
  return result;
}

/**
 * Up to maxPages pages of one kind, from where the last sweep stopped. A backlog larger than
 * that (a receiver failing for a day keeps 50,000 notifications open with live jobs) would
 * otherwise hide every row past the oldest ones from every sweep. Only a sweep that reaches
 * the end (a short page) sends the next one back to the first row.
 */
async function forEachPage<T>(
  deps: ReconcileDeps,
  kind: SweepKind,
  settings: ReconcileOptions,
  read: (after: string) => Promise<T[]>,
  idOf: (row: T) => string,
  handle: (rows: T[]) => Promise<void>,
): Promise<void> {
  const key = cursorKey(deps.config.queuePrefix, kind);
  let after = (await deps.redis.get(key)) ?? "";
  for (let page = 0; page < settings.maxPages; page++) {
    const rows = await read(after);
    if (rows.length > 0) await handle(rows);
    if (rows.length < settings.pageSize) {
      await deps.redis.del(key);
      return;
    }
    after = idOf(rows.at(-1)!);
  }
  await deps.redis.set(key, after, "EX", CURSOR_TTL_SECONDS);
}

type JobState = "missing" | "failed" | "completed" | "live" | "orphaned";

/**
 * Each job's state as far as the sweep cares, in one pipelined round trip. A job whose record
 * is kept but that is in no list a worker takes jobs from is "orphaned": it would never run,
 * and an add under its id is ignored. A Redis that evicts keys (maxmemory without noeviction)
 * leaves exactly that: losing a queue's delayed set left a retrying notification open for
 * good, and losing its wait list a batch unevaluated. Only the `suspects` (ids the caller has
 * reason to doubt) are looked for in the lists, which costs a read of the queue's lists.
 */
async function jobStates(
  deps: ReconcileDeps,
  queue: Queue,
  ids: readonly string[],
  suspects: (id: string) => boolean = () => true,
): Promise<Map<string, JobState>> {
  const pipeline = deps.redis.pipeline();
  for (const id of ids) {
    pipeline.exists(queue.toKey(id));
    pipeline.zscore(queue.keys.failed!, id);
    pipeline.zscore(queue.keys.completed!, id);
  }
  const answers = (await pipeline.exec()) ?? [];
  const states = new Map<string, JobState>();
  ids.forEach((id, i) => {
    const [exists, failed, completed] = [0, 1, 2].map((k) => {
      const [error, value] = answers[i * 3 + k] ?? [null, null];
      if (error) throw error;
      return value;
    });
    states.set(id, exists !== 1 ? "missing" : failed !== null ? "failed" : completed !== null ? "completed" : "live");
  });
  const doubted = ids.filter((id) => states.get(id) === "live" && suspects(id));
  for (const id of await orphanedAmong(deps, queue, doubted)) states.set(id, "orphaned");
  return states;
}

/** The sets a job waits in by id (read per job), and the lists (read whole). */
const JOB_SETS = ["delayed", "prioritized", "waiting-children"] as const;
const JOB_LISTS = ["paused", "wait", "active"] as const;

/** Which of these jobs are in none of the queue's sets and lists. */
async function orphanedAmong(deps: ReconcileDeps, queue: Queue, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  // First the sets alone (a delayed retry, the usual doubted job): one lookup each.
  const inSets = deps.redis.pipeline();
  for (const id of ids) for (const set of JOB_SETS) inSets.zscore(queue.keys[set]!, id);
  const setAnswers = (await inSets.exec()) ?? [];
  const notInSets = ids.filter((_, i) => JOB_SETS.every((_set, k) => (setAnswers[i * JOB_SETS.length + k]?.[1] ?? null) === null));
  if (notInSets.length === 0) return [];
  // Then sets and lists in one MULTI: a job moving between them (wait → active, active →
  // delayed) in the middle of the reads would otherwise be in none of them as read.
  // A job a worker holds (its lock key) is running, wherever its id is listed.
  const atOnce = deps.redis.multi();
  const perJob = JOB_SETS.length + 3;
  // Finished ones too: a job that completed or failed since the first reads is no orphan (the
  // next sweep sees it as it is now).
  for (const id of notInSets) {
    for (const set of JOB_SETS) atOnce.zscore(queue.keys[set]!, id);
    atOnce.exists(`${queue.toKey(id)}:lock`);
    atOnce.zscore(queue.keys.completed!, id);
    atOnce.zscore(queue.keys.failed!, id);
  }
  for (const list of JOB_LISTS) atOnce.lrange(queue.keys[list]!, 0, -1);
  const answers = (await atOnce.exec()) ?? [];
  for (const [error] of answers) if (error) throw error;
  const listed = new Set(answers.slice(notInSets.length * perJob).flatMap(([, members]) => members as string[]));
  return notInSets.filter((id, i) => {
    const own = answers.slice(i * perJob, (i + 1) * perJob).map(([, answer]) => answer);
    const inSet = own.slice(0, JOB_SETS.length).some((score) => score !== null);
    const [locked, completed, failed] = own.slice(JOB_SETS.length);
    return !listed.has(id) && !inSet && locked !== 1 && completed === null && failed === null;
  });
}
