// Every metric the shipped alerting rules select (deploy/prometheus/wallet-alerts.rules.yml) is
// one the service serves, with the labels and label values they ask for: read from the real
// API's /metrics and a real worker process's /metrics, so that a metric, a label or a value
// renamed in the code fails here instead of leaving a rule that never fires.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { readExposition, readRulesFile, selectorsIn, valuesAskedFor, type Exposition, type RuleGroup } from "../helpers/prometheus-rules.ts";

const ADMIN = { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.ADMIN_USER}:${ADMIN.ADMIN_PASSWORD}`).toString("base64")}`;

let t: TestApp;
/** What the API's and the worker's /metrics offer together (Prometheus scrapes both). */
let served: Exposition;

beforeAll(async () => {
  t = await startTestApp("prometheus-rules-metrics", ADMIN);
  const api = await t.app.inject({ url: "/metrics", headers: { authorization: AUTHORIZATION } });
  expect(api.statusCode).toBe(200);

  const port = await freePort();
  // At info: its "worker started" line says that every metric of its has been made.
  const worker = spawnWorker(t, { ...ADMIN, WORKER_METRICS_PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info" });
  let workerBody: string;
  try {
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${port}${path}`, { headers }).catch(() => null);
    await waitFor("the worker to be ready", async () => (await get("/readyz"))?.status === 200, 30_000);
    // The delivery metrics are made as its workers start, after the metrics server is up.
    await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"') || worker.exitCode !== null, 30_000);
    expect(worker.exitCode, worker.output()).toBeNull();
    const metrics = (await get("/metrics", { authorization: AUTHORIZATION }))!;
    expect(metrics.status).toBe(200);
    workerBody = await metrics.text();
  } finally {
    worker.kill("SIGTERM");
    await exited(worker);
  }
  served = readExposition(`${api.body}\n${workerBody}`);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const rules = () => (readRulesFile() as { groups: RuleGroup[] }).groups.flatMap((group) => group.rules);

describe("the metrics the alerting rules select", () => {
  it("are served by the API or the worker", () => {
    // The exposition was read: the rules are held against something.
    expect(served.has("wallet_alerts_delivery_attempts_total")).toBe(true);
    expect(served.has("wallet_alerts_queue_jobs")).toBe(true);
    const missing = rules().flatMap((rule) =>
      selectorsIn(rule.expr)
        .filter((selector) => !served.has(selector.metric))
        .map((selector) => `${rule.alert}: ${selector.metric}`),
    );
    expect(missing).toEqual([]);
  });

  it("have every label the rules match on, with every value they ask for", () => {
    const missing: string[] = [];
    for (const rule of rules()) {
      for (const { metric, matchers } of selectorsIn(rule.expr)) {
        const labels = served.get(metric);
        if (!labels) continue; // said by the test above
        for (const matcher of matchers) {
          const values = labels.get(matcher.label);
          if (!values) missing.push(`${rule.alert}: ${metric} has no label ${matcher.label}`);
          else for (const value of valuesAskedFor(matcher)) if (!values.has(value)) missing.push(`${rule.alert}: ${metric}{${matcher.label}="${value}"}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
