// A desk's export of one wallet for one period (compliance review, finding 6): every event of
// the wallet's alerts, those deleted since included, through GET /v1/wallets/{id}/events, and
// the transaction behind an event found by its signature on GET /v1/transactions. The real API,
// pipeline workers and PostgreSQL: the events are fired by ingested transfers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, errorPaths, expectProblem, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let alice: string;
let bob: string;
let blockTime = Math.floor(Date.now() / 1000) - 3_600;

beforeAll(async () => {
  t = await startTestApp("wallet-events");
  workers = startWorkers(t, ["transactions", "risk"]);
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
});

type WalletEvent = {
  eventId: string;
  alertId: string;
  alertDeleted: boolean;
  condition: string;
  observed: number;
  suppressed: boolean;
  reason: string;
  createdAt: string;
  transactionSignature?: string;
  blockTime: number | null;
  judgedSettings: { threshold: number; token: string | null; cooldownSeconds: number } | null;
  riskScore: number | null;
  riskFactors: string[] | null;
  notificationId?: string;
};
type Export = { events: WalletEvent[]; hasMore: boolean };
type AlertEvent = { eventId: string; observed: number; createdAt: string; reason: string; notificationId?: string };

const get = (url: string, token = alice) => t.app.inject({ method: "GET", url, headers: bearer(token) });

async function ok<T>(url: string, token = alice): Promise<T> {
  const res = await get(url, token);
  expect(res.statusCode, `GET ${url}: ${res.body}`).toBe(200);
  return res.json<T>();
}

const exportUrl = (walletId: string, query: Record<string, string | number | undefined>) => {
  const given = Object.entries(query).flatMap(([name, value]): [string, string][] => (value === undefined ? [] : [[name, String(value)]]));
  return `/v1/wallets/${walletId}/events?${new URLSearchParams(given).toString()}`;
};

/** Every page from `after` on (none: from the start), `limit` at a time, until hasMore is false. */
async function readOn(walletId: string, window: { since?: string; until?: string }, limit: number, after?: string): Promise<WalletEvent[]> {
  const read: WalletEvent[] = [];
  for (let cursor = after, pages = 0; ; pages++) {
    expect(pages, "the export never ends").toBeLessThan(50);
    const page = await ok<Export>(exportUrl(walletId, { ...window, limit, after: cursor }));
    expect(page.events.length).toBeLessThanOrEqual(limit);
    read.push(...page.events);
    if (!page.hasMore) return read;
    cursor = page.events.at(-1)!.eventId;
  }
}

/** Ingests one transfer out of `from` and waits until the pipeline has evaluated it. */
async function send(from: string, amount: number): Promise<Transaction> {
  const transfer = tx({ from, to: randomAddress(), amount, token: "SOL", blockTime: blockTime++ });
  await ingestTransactions(t, alice, [transfer]);
  await settled(t);
  return transfer;
}

const byExportOrder = (a: { createdAt: string; eventId: string }, b: { createdAt: string; eventId: string }) =>
  a.createdAt === b.createdAt ? (a.eventId < b.eventId ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1;

describe("GET /v1/wallets/{walletId}/events", () => {
  it("exports exactly the period's events of both alerts once each, oldest first, with a deleted alert's marked, paged across its deletion", async () => {
    const wallet = await track(t, alice);
    const first = await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    const second = await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    // Another wallet of the same caller fires too: none of its events belong in this export.
    const elsewhere = await track(t, alice);
    await createAlert(t, alice, { walletId: elsewhere.walletId, condition: "large_transfer", threshold: 10 });
    const transfers = new Map<number, Transaction>();
    for (const amount of [11, 12, 13, 14]) transfers.set(amount, await send(wallet.address, amount));
    await send(elsewhere.address, 12);

    // Each transfer fired both alerts in one evaluation: their events share createdAt, and only the id orders them.
    const fired = new Map<string, AlertEvent[]>();
    for (const alertId of [first, second]) fired.set(alertId, (await ok<{ events: AlertEvent[] }>(`/v1/risk/alerts/${alertId}/events`)).events);
    const eventOf = (alertId: string, observed: number) => fired.get(alertId)!.find((e) => e.observed === observed)!;
    expect(eventOf(first, 12).createdAt, "the two alerts' events of one transfer share their instant").toBe(eventOf(second, 12).createdAt);
    const since = eventOf(first, 12).createdAt;
    const until = eventOf(first, 14).createdAt;
    expect(eventOf(first, 11).createdAt < since && eventOf(first, 13).createdAt < until).toBe(true);
    const inPeriod = [first, second]
      .flatMap((alertId) => [12, 13].map((observed) => ({ alertId, ...eventOf(alertId, observed) })))
      .sort(byExportOrder);
    const window = { since, until };

    // The first page names an event of the alert then deleted: the rest is read on from it, out of the archive.
    const firstPage = await ok<Export>(exportUrl(wallet.walletId, { ...window, limit: 1 }));
    expect(firstPage.hasMore).toBe(true);
    expect(firstPage.events.map((e) => e.eventId)).toEqual([inPeriod[0]!.eventId]);
    const deleted = inPeriod[0]!.alertId;
    const kept = deleted === first ? second : first;
    expect((await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${deleted}`, headers: bearer(alice) })).statusCode).toBe(204);
    const rest = await readOn(wallet.walletId, window, 1, firstPage.events[0]!.eventId);
    expect([...firstPage.events, ...rest].map((e) => e.eventId)).toEqual(inPeriod.map((e) => e.eventId));

    // Read whole, and in pages of every size: the same events, each once.
    const whole = await ok<Export>(exportUrl(wallet.walletId, window));
    expect(whole.hasMore).toBe(false);
    expect(whole.events.map((e) => e.eventId)).toEqual(inPeriod.map((e) => e.eventId));
    for (const limit of [1, 2, 3]) expect((await readOn(wallet.walletId, window, limit)).map((e) => e.eventId), `limit ${limit}`).toEqual(inPeriod.map((e) => e.eventId));

    // Each event whole: its alert (marked when deleted), its transaction with that transaction's
    // blockTime, its notification (an archived one for the deleted alert), what it was judged by.
    for (const [i, event] of whole.events.entries()) {
      const expected = inPeriod[i]!;
      const transfer = transfers.get(expected.observed)!;
      expect(event).toEqual({
        eventId: expected.eventId,
        alertId: expected.alertId,
        alertDeleted: expected.alertId === deleted,
        condition: "large_transfer",
        observed: expected.observed,
        suppressed: false,
        reason: expected.reason,
        createdAt: expected.createdAt,
        transactionSignature: transfer.signature,
        blockTime: transfer.blockTime,
        judgedSettings: { threshold: 10, token: null, cooldownSeconds: 0 },
        riskScore: expect.any(Number),
        riskFactors: expect.any(Array),
        notificationId: expected.notificationId,
      });
      expect(event.notificationId).toEqual(expect.stringMatching(/^ntf_/));
    }
    expect(new Set(whole.events.filter((e) => e.alertDeleted).map((e) => e.alertId))).toEqual(new Set([deleted]));
    expect(new Set(whole.events.filter((e) => !e.alertDeleted).map((e) => e.alertId))).toEqual(new Set([kept]));

    // Without a period: all eight, oldest first.
    const all = await readOn(wallet.walletId, {}, 3);
    expect(all.map((e) => e.observed)).toEqual([11, 11, 12, 12, 13, 13, 14, 14]);
    expect([...all].sort(byExportOrder)).toEqual(all);
  });

  it("answers 404 for another caller's wallet and for a wallet nobody has", async () => {
    const wallet = await track(t, alice);
    await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    await send(wallet.address, 50);
    expect((await ok<Export>(`/v1/wallets/${wallet.walletId}/events`)).events).toHaveLength(1);
    for (const [url, token] of [
      [`/v1/wallets/${wallet.walletId}/events`, bob],
      ["/v1/wallets/wal_00000000000000000000000000/events", alice],
    ] as const) {
      const body = expectProblem(await get(url, token), 404, "not_found");
      expect(JSON.stringify(body)).not.toContain("evt_");
    }
  });

  it("refuses a since or until that names no instant, a period that is none and an after that is no event of the wallet, as problem+json 400s", async () => {
    const wallet = await track(t, alice);
    await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    await send(wallet.address, 60);
    // An event of another wallet of the same caller is no cursor for this one.
    const other = await track(t, alice);
    const otherAlert = await createAlert(t, alice, { walletId: other.walletId, condition: "large_transfer", threshold: 10 });
    await send(other.address, 60);
    const foreignEvent = (await ok<{ events: AlertEvent[] }>(`/v1/risk/alerts/${otherAlert}/events`)).events[0]!.eventId;

    for (const [query, path] of [
      ["since=yesterday", "query.since"],
      ["until=2026-03-01T00:00:00", "query.until"],
      ["since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z", "query.until"],
      ["since=2026-03-01T00:00:00Z&until=2026-03-01T01:00:00%2B01:00", "query.until"],
      ["after=evt_00000000000000000000000000", "query.after"],
      [`after=${foreignEvent}`, "query.after"],
      [`after=${"e".repeat(65)}`, "query.after"],
      ["limit=0", "query.limit"],
    ] as const) {
      const body = expectProblem(await get(`/v1/wallets/${wallet.walletId}/events?${query}`), 400, "validation_failed");
      expect(errorPaths(body), query).toEqual([path]);
    }
  });
});

describe("GET /v1/transactions?signature=", () => {
  it("returns the one transaction of the caller's wallet, and nothing for a transaction of another caller's wallet", async () => {
    const mine = await track(t, alice);
    const theirs = await track(t, bob);
    const wanted = tx({ from: mine.address, to: randomAddress(), amount: 3, blockTime: blockTime++ });
    const inbound = tx({ from: randomAddress(), to: mine.address, amount: 4, blockTime: blockTime++ });
    const bobs = tx({ from: theirs.address, to: randomAddress(), amount: 5, blockTime: blockTime++ });
    await ingestTransactions(t, alice, [wanted, inbound, bobs]);

    const found = await ok<{ transactions: Array<{ signature: string; amount: number; blockTime: number }>; total: number; hasMore: boolean }>(
      `/v1/transactions?walletId=${mine.walletId}&signature=${wanted.signature}`,
    );
    expect(found).toEqual({ transactions: [expect.objectContaining({ signature: wanted.signature, amount: 3, blockTime: wanted.blockTime })], total: 1, hasMore: false });
    // Bob's transaction, asked for through Alice's wallet: not hers, so nothing.
    expect(await ok(`/v1/transactions?walletId=${mine.walletId}&signature=${bobs.signature}`)).toEqual({ transactions: [], total: 0, hasMore: false });
    expect(await ok(`/v1/transactions?walletId=${mine.walletId}&signature=${randomSignature()}`)).toEqual({ transactions: [], total: 0, hasMore: false });
    // Bob's wallet, asked for by Alice: a 404, as without the filter.
    expectProblem(await get(`/v1/transactions?walletId=${theirs.walletId}&signature=${bobs.signature}`), 404, "not_found");
    const refused = expectProblem(await get(`/v1/transactions?walletId=${mine.walletId}&signature=not-a-signature`), 400, "validation_failed");
    expect(errorPaths(refused)).toEqual(["query.signature"]);
    // The message says what the value must be, not "must be extension: …".
    expect(refused.errors?.[0]?.message).toMatch(/^must be a transaction signature \(base58 of 64 bytes\)/);
  });
});
