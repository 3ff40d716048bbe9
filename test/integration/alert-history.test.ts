// The audit trail of an alert (compliance review): what each event was judged against, and who
// changed the alert, when, from what to what (GET /v1/risk/alerts/{id}/history), through the
// real API, pipeline workers and PostgreSQL. The review's scenario first: a transfer missed while
// the alert was paused, and an event judged under a threshold changed since, must be explainable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordPermanentFailure } from "../../src/notify/alert-health.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let alice: string;
let bob: string;
let blockTime = Math.floor(Date.now() / 1000) - 600;

beforeAll(async () => {
  t = await startTestApp("alert-history");
  workers = startWorkers(t, ["transactions", "risk"]);
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
});

type Change = { changeId: number; at: string; by: string; action: string; changes: Record<string, [unknown, unknown]> };
type History = { history: Change[]; hasMore: boolean };
type Event = {
  eventId: string;
  observed: number;
  suppressed: boolean;
  reason: string;
  createdAt: string;
  judgedSettings: { threshold: number; token: string | null; cooldownSeconds: number } | null;
  riskScore: number | null;
  riskFactors: string[] | null;
};
type Events = { events: Event[]; total: number; hasMore: boolean };

const hook = (path: string) => `http://127.0.0.1:9/${path}`;

async function call<T>(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: unknown, token = alice): Promise<{ status: number; body: T }> {
  const res = await t.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: res.statusCode, body: (res.body === "" ? undefined : res.json()) as T };
}

async function ok<T>(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: unknown, token = alice): Promise<T> {
  const res = await call<T>(method, url, payload, token);
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

async function webhookAlert(walletId: string, body: Record<string, unknown>): Promise<{ alertId: string; webhookSecret: string }> {
  return ok("POST", "/v1/risk/alerts", { walletId, condition: "large_transfer", notificationMethod: "webhook", webhookUrl: hook("first"), ...body });
}

const history = (alertId: string, query = "", token = alice) => call<History>("GET", `/v1/risk/alerts/${alertId}/history${query}`, undefined, token);
const events = (alertId: string, query = "") => ok<Events>("GET", `/v1/risk/alerts/${alertId}/events${query}`);

async function send(from: string, amount: number): Promise<void> {
  await ingestTransactions(t, alice, [tx({ from, to: randomAddress(), amount, token: "SOL", blockTime: blockTime++ })]);
  await settled(t);
}

describe("an alert's audit trail", () => {
  it("shows that an event was judged against threshold 1,000 and that the 900,000 SOL transfer came while the alert was paused", async () => {
    const wallet = await track(t, alice);
    const { alertId } = await webhookAlert(wallet.walletId, { threshold: 1000 });
    await send(wallet.address, 5000);
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { threshold: 100_000, webhookUrl: hook("new-endpoint") });
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { status: "paused" });
    await send(wallet.address, 900_000);
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { status: "active" });
    await send(wallet.address, 200_000);

    // Each event keeps what it was judged by: the first the threshold of its time, the last the new one.
    const listed = await events(alertId);
    expect(listed.events.map((e) => [e.observed, e.judgedSettings])).toEqual([
      [200_000, { threshold: 100_000, token: null, cooldownSeconds: 0 }],
      [5000, { threshold: 1000, token: null, cooldownSeconds: 0 }],
    ]);
    for (const event of listed.events) {
      expect(event.riskScore).toEqual(expect.any(Number));
      expect(event.riskFactors).toEqual(expect.any(Array));
    }

    // The history: who changed what, when, oldest first; the pause brackets the 900,000.
    const { status, body } = await history(alertId);
    expect(status).toBe(200);
    expect(body.hasMore).toBe(false);
    expect(body.history.map((c) => [c.action, c.by, c.changes])).toEqual([
      [
        "created",
        "alice",
        {
          walletId: [null, wallet.walletId],
          condition: [null, "large_transfer"],
          status: [null, "active"],
          threshold: [null, 1000],
          token: [null, null],
          notificationMethod: [null, "webhook"],
          webhookUrl: [null, hook("first")],
          recipient: [null, null],
          cooldownSeconds: [null, 0],
        },
      ],
      ["updated", "alice", { threshold: [1000, 100_000], webhookUrl: [hook("first"), hook("new-endpoint")] }],
      ["paused", "alice", { status: ["active", "paused"] }],
      ["resumed", "alice", { status: ["paused", "active"] }],
    ]);
    const times = body.history.map((c) => Date.parse(c.at));
    expect(times.every((time, i) => !Number.isNaN(time) && (i === 0 || time >= times[i - 1]!))).toBe(true);
    const [pausedAt, resumedAt] = [times[2]!, times[3]!];
    const [missed] = await t.deps.sql<{ at: number }[]>`
      select (extract(epoch from i.created_at) * 1000)::float8 as at
      from transactions x join ingest_batches i on i.id = x.batch_id
      where x.from_address = ${wallet.address} and x.amount = 900000`;
    expect(missed!.at).toBeGreaterThanOrEqual(pausedAt);
    expect(missed!.at).toBeLessThanOrEqual(resumedAt);
  });

  it("records a PATCH that changes nothing as no entry, and pages with after until hasMore is false", async () => {
    const wallet = await track(t, alice);
    const { alertId } = await webhookAlert(wallet.walletId, { threshold: 10, cooldownSeconds: 60 });
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { threshold: 10, status: "active" });
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { cooldownSeconds: 120 });
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { status: "paused", threshold: 20 });

    const first = await history(alertId, "?limit=2");
    expect(first.body.history.map((c) => c.action)).toEqual(["created", "updated"]);
    expect(first.body.hasMore).toBe(true);
    const next = await history(alertId, `?limit=2&after=${first.body.history[1]!.changeId}`);
    // A PATCH of status that changed something else too is named by its status, and lists both.
    expect(next.body.history.map((c) => [c.action, c.changes])).toEqual([["paused", { status: ["active", "paused"], threshold: [10, 20] }]]);
    expect(next.body.hasMore).toBe(false);
    expect((await history(alertId, "?after=0")).body.history).toHaveLength(3);
    expect((await history(alertId, "?after=-1")).status).toBe(400);
    expect((await history(alertId, "?limit=0")).status).toBe(400);
  });

  it("enters the service's disabling by service, and the owner's resume after it", async () => {
    const wallet = await track(t, alice);
    const { alertId } = await webhookAlert(wallet.walletId, { threshold: 10 });
    const health = { sql: t.deps.sql, logger: t.deps.logger, enqueueNotice: async () => {} };
    expect(await recordPermanentFailure(health, { alertId, gone: true, error: "HTTP 410", now: new Date() })).toBe(true);
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { status: "active" });

    const reason = "the webhook endpoint answered 410 Gone";
    const { body } = await history(alertId);
    expect(body.history.slice(1).map((c) => [c.action, c.by, c.changes])).toEqual([
      ["disabled", "service", { status: ["active", "disabled"], disabledReason: [null, reason] }],
      ["resumed", "alice", { status: ["disabled", "active"], disabledReason: [reason, null] }],
    ]);
  });

  it("keeps a deleted alert's history readable by its owner, ending with its deletion, and never shows a secret", async () => {
    const wallet = await track(t, alice);
    const { alertId, webhookSecret } = await webhookAlert(wallet.walletId, { threshold: 10 });
    await send(wallet.address, 50);
    const rotated = await ok<{ webhookSecret: string }>("POST", `/v1/risk/alerts/${alertId}/rotate-secret`);
    await ok("PATCH", `/v1/risk/alerts/${alertId}`, { status: "paused" });
    expect((await call("DELETE", `/v1/risk/alerts/${alertId}`)).status).toBe(204);
    expect((await call("GET", `/v1/risk/alerts/${alertId}`)).status).toBe(404);

    const { status, body } = await history(alertId);
    expect(status).toBe(200);
    expect(body.history.map((c) => [c.action, c.by])).toEqual([
      ["created", "alice"],
      ["secret_rotated", "alice"],
      ["paused", "alice"],
      ["deleted", "alice"],
    ]);
    expect(body.history[1]!.changes).toEqual({});
    expect(body.history[3]!.changes).toEqual({
      walletId: [wallet.walletId, null],
      condition: ["large_transfer", null],
      status: ["paused", null],
      threshold: [10, null],
      token: [null, null],
      notificationMethod: ["webhook", null],
      webhookUrl: [hook("first"), null],
      recipient: [null, null],
      cooldownSeconds: [0, null],
    });
    const stored = JSON.stringify(await t.deps.sql`select * from alert_changes where alert_id = ${alertId}`);
    expect(stored).not.toContain(webhookSecret);
    expect(stored).not.toContain(rotated.webhookSecret);
    expect(stored).not.toContain("whsec_");
    // Another caller's is not found, deleted or not.
    expect((await history(alertId, "", bob)).status).toBe(404);

    // The archive keeps what its event was judged by.
    const [archived] = await t.deps.sql<{ judged: unknown; score: number | null; factors: string[] | null }[]>`
      select judged_settings as judged, risk_score as score, risk_factors as factors from deleted_alert_events where alert_id = ${alertId}`;
    expect(archived).toEqual({ judged: { threshold: "10", token: null, cooldownSeconds: 0 }, score: expect.any(Number), factors: expect.any(Array) });
  });

  it("ends the history of each alert deleted with its wallet, by whoever deleted the wallet", async () => {
    const wallet = await track(t, alice);
    const first = await webhookAlert(wallet.walletId, { threshold: 10 });
    const second = await webhookAlert(wallet.walletId, { threshold: 20 });
    expect((await call("DELETE", `/v1/wallets/${wallet.walletId}`)).status).toBe(204);
    for (const { alertId } of [first, second]) {
      const { status, body } = await history(alertId);
      expect(status).toBe(200);
      expect(body.history.map((c) => [c.action, c.by])).toEqual([
        ["created", "alice"],
        ["deleted", "alice"],
      ]);
    }
  });

  it("answers 404 for an alert nobody has, and for another caller's", async () => {
    const wallet = await track(t, alice);
    const { alertId } = await webhookAlert(wallet.walletId, { threshold: 10 });
    expect((await history(alertId, "", bob)).status).toBe(404);
    expect((await history("alr_00000000000000000000000000")).status).toBe(404);
  });

  it("lists the events of a period with since and until, and refuses a period that is none", async () => {
    const wallet = await track(t, alice);
    const { alertId } = await webhookAlert(wallet.walletId, { threshold: 10 });
    await send(wallet.address, 11);
    await send(wallet.address, 12);
    await send(wallet.address, 13);
    const all = (await events(alertId)).events; // newest first
    expect(all.map((e) => e.observed)).toEqual([13, 12, 11]);
    const middle = all[1]!.createdAt;
    const newest = all[0]!.createdAt;

    const from = await events(alertId, `?since=${encodeURIComponent(middle)}`);
    expect(from.events.map((e) => e.observed)).toEqual([13, 12]);
    expect(from.total).toBe(2);
    const until = await events(alertId, `?until=${encodeURIComponent(middle)}`);
    expect(until.events.map((e) => e.observed)).toEqual([11]);
    expect(until.total).toBe(1);
    const window = await events(alertId, `?since=${encodeURIComponent(middle)}&until=${encodeURIComponent(newest)}&limit=1`);
    expect(window).toMatchObject({ total: 1, hasMore: false });
    expect(window.events.map((e) => e.observed)).toEqual([12]);
    // The same instant written with another zone.
    const shifted = new Date(Date.parse(middle) + 3_600_000).toISOString().replace("Z", "+01:00");
    expect((await events(alertId, `?since=${encodeURIComponent(shifted)}`)).total).toBe(2);

    for (const [query, path] of [
      ["?since=yesterday", "query.since"],
      ["?until=2026-03-01T00:00:00", "query.until"],
      [`?since=${encodeURIComponent(newest)}&until=${encodeURIComponent(middle)}`, "query.until"],
      [`?since=${encodeURIComponent(middle)}&until=${encodeURIComponent(middle)}`, "query.until"],
    ] as const) {
      const res = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/events${query}`, headers: bearer(alice) });
      expect(res.statusCode, `${query}: ${res.body}`).toBe(400);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect((res.json() as { errors: Array<{ path: string }> }).errors.map((e) => e.path)).toEqual([path]);
    }
  });
});
