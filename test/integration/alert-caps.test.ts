// MAX_ALERTS_PER_WALLET and MAX_ALERTS_PER_CALLER: a token with alerts:write cannot pile up
// alerts (each a notification per event, and a rule in every worker's memory). A create past
// a cap is a 409 conflict (DESIGN.md's only code for a 409) whose detail names the cap, with
// no Location, and it writes nothing; every status counts; a replay under an Idempotency-Key
// is still a replay; creates racing for the last slot make exactly one alert.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auth, insertWallet } from "../helpers/alert-fixtures.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { expectProblem } from "../helpers/seed.ts";

const PER_WALLET = 3;
const PER_CALLER = 5;

let defaults: TestApp;
let small: TestApp;

beforeAll(async () => {
  defaults = await startTestApp("alert-caps-defaults");
  small = await startTestApp("alert-caps", { MAX_ALERTS_PER_WALLET: String(PER_WALLET), MAX_ALERTS_PER_CALLER: String(PER_CALLER) });
});
afterAll(async () => {
  await defaults?.close();
  await small?.close();
});

const body = (walletId: string) => ({ walletId, condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550123" });

const create = (t: TestApp, token: string, walletId: string, key?: string) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: { ...auth(token), ...(key === undefined ? {} : { "idempotency-key": key }) },
    payload: body(walletId),
  });

/** Creates and requires a 201; the new alert's id. */
async function created(t: TestApp, token: string, walletId: string, key?: string): Promise<string> {
  const res = await create(t, token, walletId, key);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().alertId as string;
}

const storedAlerts = async (t: TestApp, owner: string): Promise<number> =>
  (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from alerts where owner = ${owner}`)[0]!.n;

/** Asserts a cap's refusal: a 409 conflict naming the cap, without the Location of a key's alert. */
function capRefused(res: Awaited<ReturnType<typeof create>>, cap: "MAX_ALERTS_PER_WALLET" | "MAX_ALERTS_PER_CALLER" = "MAX_ALERTS_PER_WALLET") {
  const problem = expectProblem(res, 409, "conflict");
  expect(problem.detail).toContain(`${cap}=`);
  expect(res.headers.location).toBeUndefined();
  return problem;
}

/** A caller of its own (the caps count per caller) with a token for it. */
const caller = async (t: TestApp, sub: string) => ({ sub, token: await t.token(sub) });

describe("caps on a caller's alerts", () => {
  it("refuses the 51st alert on one wallet (MAX_ALERTS_PER_WALLET defaults to 50) with a 409 conflict naming the cap, and writes nothing", async () => {
    const { sub, token } = await caller(defaults, "alice");
    const { walletId } = await insertWallet(defaults, sub);
    for (let i = 0; i < 50; i++) await created(defaults, token, walletId);

    const refused = await create(defaults, token, walletId, "the-51st");
    const problem = capRefused(refused);
    expect(problem.detail).toContain(`wallet ${walletId} has 50 alerts already`);
    expect(problem.detail).toContain("MAX_ALERTS_PER_WALLET=50");
    expect(problem.detail).toContain("DELETE /v1/risk/alerts/{alertId}");
    expect(refused.json()).toMatchObject({ type: "https://wallet-alerts.dev/problems/conflict", title: "Conflict", status: 409 });
    expect(refused.headers.location).toBeUndefined();
    expect(await storedAlerts(defaults, sub)).toBe(50);
    // Not even its key: it is free for the create that comes once a slot is.
    const [keyed] = await defaults.deps.sql<{ n: number }[]>`select count(*)::int as n from alerts where idempotency_key = 'the-51st'`;
    expect(keyed!.n).toBe(0);
  });

  it("refuses a create past MAX_ALERTS_PER_CALLER across wallets, paused alerts counted, and names that cap", async () => {
    const { sub, token } = await caller(small, "carol");
    const wallets = [await insertWallet(small, sub), await insertWallet(small, sub), await insertWallet(small, sub)].map((w) => w.walletId);
    const ids = [];
    for (let i = 0; i < PER_WALLET; i++) ids.push(await created(small, token, wallets[0]!));
    for (let i = 0; i < PER_CALLER - PER_WALLET; i++) ids.push(await created(small, token, wallets[1]!));
    const paused = await small.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${ids[0]}`, headers: auth(token), payload: { status: "paused" } });
    expect(paused.statusCode, paused.body).toBe(200);

    // A wallet with no alert at all: only the caller's cap is in the way.
    const refused = capRefused(await create(small, token, wallets[2]!), "MAX_ALERTS_PER_CALLER");
    expect(refused.detail).toContain(`you have ${PER_CALLER} alerts already`);
    expect(refused.detail).toContain(`MAX_ALERTS_PER_CALLER=${PER_CALLER}`);
    expect(await storedAlerts(small, sub)).toBe(PER_CALLER);
  });

  it("refuses the caller's wallet over MAX_ALERTS_PER_WALLET before the caller's total is reached", async () => {
    const { sub, token } = await caller(small, "erin");
    const { walletId } = await insertWallet(small, sub);
    for (let i = 0; i < PER_WALLET; i++) await created(small, token, walletId);
    const refused = capRefused(await create(small, token, walletId));
    expect(refused.detail).toContain(`MAX_ALERTS_PER_WALLET=${PER_WALLET}`);
    // Another of the caller's wallets still takes alerts, up to the caller's total.
    const other = await insertWallet(small, sub);
    await created(small, token, other.walletId);
    expect(await storedAlerts(small, sub)).toBe(PER_WALLET + 1);
  });

  it("leaves other callers unaffected by one caller at its caps", async () => {
    const full = await caller(small, "frank");
    const fullWallet = await insertWallet(small, full.sub);
    for (let i = 0; i < PER_WALLET; i++) await created(small, full.token, fullWallet.walletId);
    capRefused(await create(small, full.token, fullWallet.walletId));

    const other = await caller(small, "grace");
    const otherWallet = await insertWallet(small, other.sub);
    for (let i = 0; i < PER_WALLET; i++) await created(small, other.token, otherWallet.walletId);
    capRefused(await create(small, other.token, otherWallet.walletId));
    // The same address tracked by another caller is another wallet: its alerts are counted apart.
    const sameAddress = await insertWallet(small, "heidi", fullWallet.address);
    await created(small, await small.token("heidi"), sameAddress.walletId);
  });

  it("frees a slot when an alert is deleted", async () => {
    const { sub, token } = await caller(small, "ivan");
    const { walletId } = await insertWallet(small, sub);
    const ids = [];
    for (let i = 0; i < PER_WALLET; i++) ids.push(await created(small, token, walletId));
    capRefused(await create(small, token, walletId));

    const deleted = await small.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${ids[1]}`, headers: auth(token) });
    expect(deleted.statusCode).toBe(204);
    await created(small, token, walletId);
    capRefused(await create(small, token, walletId));
    expect(await storedAlerts(small, sub)).toBe(PER_WALLET);
  });

  it("answers a replay under the Idempotency-Key at the cap as a replay (201, Idempotent-Replayed), and another body under it as that key's 409 conflict", async () => {
    const { sub, token } = await caller(small, "judy");
    const { walletId } = await insertWallet(small, sub);
    for (let i = 0; i < PER_WALLET - 1; i++) await created(small, token, walletId);
    const first = await create(small, token, walletId, "the-last-slot");
    expect(first.statusCode, first.body).toBe(201);

    const replay = await create(small, token, walletId, "the-last-slot");
    expect(replay.statusCode, replay.body).toBe(201);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json().alertId).toBe(first.json().alertId);
    const changed = await small.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: { ...auth(token), "idempotency-key": "the-last-slot" },
      payload: { ...body(walletId), cooldownSeconds: 60 },
    });
    expect(expectProblem(changed, 409, "conflict").detail).toContain("was used for a different request");
    // A new key is a new alert, and that one the cap refuses.
    capRefused(await create(small, token, walletId, "one-too-many"));
    expect(await storedAlerts(small, sub)).toBe(PER_WALLET);
  });

  it("answers requests racing under one Idempotency-Key for the last slot as replays of the one alert they make, none refused", async () => {
    const { sub, token } = await caller(small, "kim");
    const { walletId } = await insertWallet(small, sub);
    for (let i = 0; i < PER_WALLET - 1; i++) await created(small, token, walletId);

    const answers = await Promise.all(Array.from({ length: 8 }, () => create(small, token, walletId, "racing-for-the-last")));
    expect(answers.map((res) => res.statusCode)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((res) => res.json().alertId)).size).toBe(1);
    expect(answers.filter((res) => res.headers["idempotent-replayed"] === "true").length).toBe(7);
    capRefused(await create(small, token, walletId));
    expect(await storedAlerts(small, sub)).toBe(PER_WALLET);
  });

  it("lets exactly as many of many concurrent creates through as the cap has room for, and refuses the rest", async () => {
    const { sub, token } = await caller(small, "lena");
    const { walletId } = await insertWallet(small, sub);

    const answers = await Promise.all(Array.from({ length: 12 }, () => create(small, token, walletId)));
    const statuses = answers.map((res) => res.statusCode).sort();
    expect(statuses).toEqual([...Array(PER_WALLET).fill(201), ...Array(12 - PER_WALLET).fill(409)]);
    for (const res of answers.filter((answer) => answer.statusCode === 409)) capRefused(res);
    expect(await storedAlerts(small, sub)).toBe(PER_WALLET);
  });

  it("answers an unknown wallet 404 even at the caller's cap: the wallet is what is wrong", async () => {
    const { sub, token } = await caller(small, "mia");
    const [first, second, empty] = [await insertWallet(small, sub), await insertWallet(small, sub), await insertWallet(small, sub)];
    for (let i = 0; i < PER_WALLET; i++) await created(small, token, first.walletId);
    for (let i = PER_WALLET; i < PER_CALLER; i++) await created(small, token, second.walletId);
    capRefused(await create(small, token, empty.walletId), "MAX_ALERTS_PER_CALLER");
    expectProblem(await create(small, token, "wal_unknown"), 404, "not_found");
  });
});
