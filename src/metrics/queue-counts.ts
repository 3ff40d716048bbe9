// Job counts per queue and state, and which queues are paused, read straight from Redis:
// shared by the /metrics gauges and `npm run queues`, so both always agree.
import type { Queues } from "../queue/producers.ts";
import type { QueueName } from "../queue/names.ts";

/** The states BullMQ counts; "prioritized" jobs wait too, just in a sorted set of their own. */
export const QUEUE_STATES = [
  "waiting",
  "prioritized",
  "active",
  "delayed",
  "failed",
  "completed",
  "waiting-children",
] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export type QueueCounts = { queue: QueueName; counts: Record<QueueState, number> };

export async function readQueueCounts(queues: Queues): Promise<QueueCounts[]> {
  const entries = Object.entries(queues) as [QueueName, Queues[QueueName]][];
  return Promise.all(
    entries.map(async ([queue, handle]) => {
      const raw = await handle.getJobCounts(...QUEUE_STATES);
      const counts = Object.fromEntries(QUEUE_STATES.map((state) => [state, raw[state] ?? 0]));
      return { queue, counts: counts as Record<QueueState, number> };
    }),
  );
}

/**
 * Whether each queue is paused: BullMQ's flag, set by Bull Board's Pause (or queue.pause()).
 * It lives in Redis, so it outlasts every worker restart, and no worker takes a job of a
 * paused queue: new jobs just wait (and count as waiting) until someone resumes it.
 */
export async function readPausedQueues(queues: Queues): Promise<Array<{ queue: QueueName; paused: boolean }>> {
  const entries = Object.entries(queues) as [QueueName, Queues[QueueName]][];
  return Promise.all(entries.map(async ([queue, handle]) => ({ queue, paused: await handle.isPaused() })));
}

export type QueueStatus = QueueCounts & { paused: boolean };

/** Counts and the paused flag of every queue, for `npm run queues`. */
export async function readQueueStatus(queues: Queues): Promise<QueueStatus[]> {
  const [counts, paused] = await Promise.all([readQueueCounts(queues), readPausedQueues(queues)]);
  const pausedQueues = new Set(paused.filter((entry) => entry.paused).map((entry) => entry.queue));
  return counts.map((row) => ({ ...row, paused: pausedQueues.has(row.queue) }));
}

const TABLE_COLUMNS = ["waiting", "active", "delayed", "failed", "completed"] as const;
const PAUSED_MARK = "PAUSED";

/**
 * The operator's table: one row per queue and a total. "waiting" includes prioritized jobs,
 * since both are queued to run as soon as a worker is free. A paused queue's row ends in
 * PAUSED, and a line under the table says what that means for its jobs.
 */
export function formatQueueTable(rows: readonly QueueStatus[]): string {
  const cells = rows.map((row) => [
    row.queue,
    ...TABLE_COLUMNS.map((column) =>
      String(column === "waiting" ? row.counts.waiting + row.counts.prioritized : row.counts[column]),
    ),
  ]);
  const total = ["total", ...TABLE_COLUMNS.map((_, i) => String(cells.reduce((sum, c) => sum + Number(c[i + 1]), 0)))];
  const table = [["queue", ...TABLE_COLUMNS], ...cells, total];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  const render = (line: string[]) =>
    line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const queueRows = table.slice(1, -1).map((line, i) => render(line) + (rows[i]!.paused ? `  ${PAUSED_MARK}` : ""));
  const paused = rows.filter((row) => row.paused).map((row) => row.queue);
  const notes = paused.map(
    (queue) => `${queue} is ${PAUSED_MARK} (from Bull Board?): no worker takes its jobs until it is resumed (Bull Board, /admin/queues: Resume)`,
  );
  return [render(table[0]!), rule, ...queueRows, rule, render(total), ...(notes.length > 0 ? ["", ...notes] : [])].join("\n");
}
