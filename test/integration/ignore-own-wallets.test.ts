// large_transfer with ignoreOwnWallets, end to end: API → Postgres → BullMQ worker. A desk that
// tracks its hot and cold wallets is not paged for its daily sweep between them (noise review,
// finding 5), and is still paged for the same amount sent anywhere else. "Own" is the alert
// owner's: another caller watching the hot wallet, who does not track the cold one, is paged.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { fieldErrors } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";
import { eventsOf, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let desk: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp("ignore-own-wallets");
  workers = startWorkers(t);
  desk = await t.token("desk");
  other = await t.token("other-desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const create = (token: string, payload: Record<string, unknown>) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook", ...payload },
  });

async function created(token: string, payload: Record<string, unknown>): Promise<string> {
  const res = await create(token, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().alertId as string;
}

const alertCount = async () => (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from alerts`)[0]!.n;
const fired = async (alertId: string) => (await eventsOf(t, alertId)).map((e) => [e.dedupeKey, e.observed]);

describe("a large_transfer alert with ignoreOwnWallets", () => {
  it("fires nothing for a 20,000 SOL sweep from the caller's hot wallet to its cold wallet, fires for the same sent to an outsider; other alerts fire for both", async () => {
    const hot = await track(t, desk);
    const cold = await track(t, desk);
    const ignoring = await created(desk, { walletId: hot.walletId, condition: "large_transfer", threshold: 10_000, ignoreOwnWallets: true });
    const plain = await created(desk, { walletId: hot.walletId, condition: "large_transfer", threshold: 10_000 });
    const coldIgnoring = await created(desk, { walletId: cold.walletId, condition: "large_transfer", threshold: 10_000, ignoreOwnWallets: true });
    // Another caller watches the same hot wallet, and does not track the cold one: the sweep is not its own.
    const othersHot = await track(t, other, hot.address);
    const othersIgnoring = await created(other, { walletId: othersHot.walletId, condition: "large_transfer", threshold: 10_000, ignoreOwnWallets: true });
    const got = await t.app.inject({ url: `/v1/risk/alerts/${ignoring}`, headers: bearer(desk) });
    expect(got.json()).toMatchObject({ ignoreOwnWallets: true, threshold: 10_000 });
    expect((await t.app.inject({ url: `/v1/risk/alerts/${plain}`, headers: bearer(desk) })).json().ignoreOwnWallets).toBe(false);

    const sweep = tx({ from: hot.address, to: cold.address, amount: 20_000, token: "SOL", blockTime: now - 600 });
    await ingestTransactions(t, desk, [sweep]);
    await settled(t);
    expect(await fired(ignoring)).toEqual([]);
    expect(await fired(coldIgnoring)).toEqual([]);
    expect(await fired(plain)).toEqual([[sweep.signature, 20_000]]);
    expect(await fired(othersIgnoring)).toEqual([[sweep.signature, 20_000]]);

    const outward = tx({ from: hot.address, to: randomAddress(), amount: 20_000, token: "SOL", blockTime: now - 300 });
    await ingestTransactions(t, desk, [outward]);
    await settled(t);
    expect(await fired(ignoring)).toEqual([[outward.signature, 20_000]]);
    expect(await fired(plain)).toEqual([
      [sweep.signature, 20_000],
      [outward.signature, 20_000],
    ]);
    expect(await fired(othersIgnoring)).toEqual([
      [sweep.signature, 20_000],
      [outward.signature, 20_000],
    ]);
  });

  it("with windowSeconds, does not sum the sends to the caller's own wallets", async () => {
    const hot = await track(t, desk);
    const cold = await track(t, desk);
    const windowed = { walletId: hot.walletId, condition: "large_transfer", threshold: 10_000, token: "SOL", windowSeconds: 3600 };
    const ignoring = await created(desk, { ...windowed, ignoreOwnWallets: true });
    const plain = await created(desk, windowed);
    // 8,000 SOL swept to cold, then 3,000 to an outsider: 11,000 in the hour, 3,000 of it not the desk's own.
    const toCold = tx({ from: hot.address, to: cold.address, amount: 8_000, token: "SOL", blockTime: now - 900 });
    const toOutsider = tx({ from: hot.address, to: randomAddress(), amount: 3_000, token: "SOL", blockTime: now - 800 });
    await ingestTransactions(t, desk, [toCold]);
    await settled(t);
    await ingestTransactions(t, desk, [toOutsider]);
    await settled(t);
    expect(await fired(ignoring)).toEqual([]);
    expect(await fired(plain)).toEqual([[toOutsider.signature, 11_000]]);
  });

  it("keeps ignoreOwnWallets in the alert's history and its archive, and refuses it in a PATCH", async () => {
    const wallet = await track(t, desk);
    const alertId = await created(desk, { walletId: wallet.walletId, condition: "large_transfer", threshold: 1_000, ignoreOwnWallets: true });
    const patched = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(desk), payload: { ignoreOwnWallets: false } });
    expect(fieldErrors(patched)).toEqual(["body.ignoreOwnWallets cannot change: create a new alert with the setting you want (and delete this one)"]);
    expect((await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alertId}`, headers: bearer(desk) })).statusCode).toBe(204);
    const history = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/history`, headers: bearer(desk) });
    const changes = history.json().history.map((c: { action: string; changes: Record<string, unknown> }) => [c.action, c.changes.ignoreOwnWallets]);
    expect(changes).toEqual([
      ["created", [null, true]],
      ["deleted", [true, null]],
    ]);
    const [archived] = await t.deps.sql<{ settings: Record<string, unknown> }[]>`select settings from deleted_alerts where id = ${alertId}`;
    expect(archived!.settings).toMatchObject({ ignore_own_wallets: true });
  });
});

describe("POST /v1/risk/alerts: ignoreOwnWallets", () => {
  let walletId: string;
  beforeAll(async () => {
    ({ walletId } = await track(t, desk));
  });

  it.each([
    ["on another condition", { condition: "unusual_activity", ignoreOwnWallets: true }, "body.ignoreOwnWallets is only used by large_transfer alerts"],
    ["on another condition, even false", { condition: "suspicious_counterparty", ignoreOwnWallets: false }, "body.ignoreOwnWallets is only used by large_transfer alerts"],
    ["not a boolean", { condition: "large_transfer", threshold: 10, ignoreOwnWallets: "yes" }, "body.ignoreOwnWallets"],
  ])("refuses it %s with a 400 naming body.ignoreOwnWallets, and stores nothing", async (_name, body, expected) => {
    const before = await alertCount();
    const res = await create(desk, { walletId, ...body });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("validation_failed");
    const errors = fieldErrors(res);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.startsWith(expected)).toBe(true);
    expect(await alertCount()).toBe(before);
  });

  it("shows ignoreOwnWallets false on an alert made without it", async () => {
    const res = await create(desk, { walletId, condition: "large_transfer", threshold: 10 });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().ignoreOwnWallets).toBe(false);
  });
});
