// Job counts per queue and state, read straight from Redis: shared by the /metrics gauge
// and `npm run queues`, so both always agree.
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

const TABLE_COLUMNS = ["waiting", "active", "delayed", "failed", "completed"] as const;

/**
 * The operator's table: one row per queue and a total. "waiting" includes prioritized jobs,
 * since both are queued to run as soon as a worker is free.
 */
export function formatQueueTable(rows: readonly QueueCounts[]): string {
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
  return [render(table[0]!), rule, ...table.slice(1, -1).map(render), rule, render(total)].join("\n");
}
