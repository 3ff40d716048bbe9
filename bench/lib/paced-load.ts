// An open-loop load at an even rate: request i is due at start + i / rate, whatever the answers
// before it did. autocannon's `overallRate` is not that: each connection sends its share of a
// second back to back when the second begins (a burst of `rate` requests, then silence), and
// with a rate under 1,000 per connection it fills in the "coordinated omission" by recording
// extra samples at every millisecond below each answer's time. Both make a p99 of queueing
// behind the burst, not of one request at that rate.
//
// The latency of a request is counted from when it was due, not from when a connection took it
// (so a request kept waiting because every connection was busy is counted with its wait).
import { Pool } from "undici";
import { percentiles, type Percentiles } from "./percentiles.ts";

export type PacedLoad = {
  origin: string;
  /** The path of request i (a fresh one each time, e.g. a random wallet's page). */
  path: (i: number) => string;
  headers: Record<string, string>;
  ratePerSecond: number;
  seconds: number;
  /** Connections the pool may open: enough that a slow answer does not hold the next one back. */
  connections?: number;
};

export type PacedResult = {
  sent: number;
  /** Answers other than 2xx, and requests that failed outright. */
  errors: number;
  /** Requests answered per second over the run. */
  achievedPerSecond: number;
  latencyMs: Percentiles;
};

export async function pacedLoad(load: PacedLoad): Promise<PacedResult> {
  const pool = new Pool(load.origin, { connections: load.connections ?? 10 });
  const total = Math.round(load.ratePerSecond * load.seconds);
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  try {
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / load.ratePerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      inFlight.push(
        pool.request({ method: "GET", path: load.path(i), headers: load.headers }).then(
          async (response) => {
            await response.body.arrayBuffer();
            if (response.statusCode >= 200 && response.statusCode < 300) latencies.push(performance.now() - due);
            else errors++;
          },
          () => void errors++,
        ),
      );
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { sent: total, errors, achievedPerSecond: Math.round(latencies.length / seconds), latencyMs: percentiles(latencies) };
}
