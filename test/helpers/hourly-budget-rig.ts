// What the tests of an hourly budget per caller (SMS_PER_CALLER_PER_HOUR,
// EMAIL_PER_CALLER_PER_HOUR) run against: an app whose clock starts clear of an hour's end
// (clock.ts) and can be moved into the next hour, the real delivery workers with metrics of their own, and the workers' log lines to read.
import { Writable } from "node:stream";
import { Registry } from "prom-client";
import { createLogger } from "../../src/logger.ts";
import { createDeliveryMetrics, createJobMetrics } from "../../src/metrics/index.ts";
import { startTestApp, type TestApp } from "./app.ts";
import { clockClearOfBoundary, HOUR_MS } from "./clock.ts";
import { startDeliveryWorkers, type DeliveryWorkers } from "./delivery.ts";

export type HourlyBudgetRig = {
  t: TestApp;
  workers: DeliveryWorkers;
  /** The workers' log lines, as written. */
  lines: string[];
  /** A sample of the workers' metrics: `name` after `wallet_alerts_`, a regular expression with its labels. */
  sample: (name: string) => Promise<number>;
  /** Moves the app's clock this many hours ahead of the hour it started in. */
  setHoursAhead: (hours: number) => void;
  close: () => Promise<void>;
};

export async function startHourlyBudgetRig(
  label: string,
  env: Record<string, string>,
  workerOptions: Parameters<typeof startDeliveryWorkers>[1],
): Promise<HourlyBudgetRig> {
  const clearOfBoundary = clockClearOfBoundary(HOUR_MS);
  let hoursAhead = 0;
  const t = await startTestApp(label, env, { now: () => new Date(clearOfBoundary().getTime() + hoursAhead * HOUR_MS) });
  const registry = new Registry();
  const lines: string[] = [];
  // The app's own logger is silent: the workers get one whose lines the tests read.
  const logger = createLogger("debug", new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
  const workers = startDeliveryWorkers(
    { ...t, deps: { ...t.deps, logger } },
    workerOptions,
    { deliveryMetrics: createDeliveryMetrics(registry, createJobMetrics(registry)) },
  );
  return {
    t,
    workers,
    lines,
    sample: async (name) => Number(new RegExp(`^wallet_alerts_${name} (\\d+)$`, "m").exec(await registry.metrics())?.[1]),
    setHoursAhead: (hours) => {
      hoursAhead = hours;
    },
    close: async () => {
      await workers.close();
      await t.close();
    },
  };
}
