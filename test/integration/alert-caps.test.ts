// MAX_ALERTS_PER_WALLET and MAX_ALERTS_PER_CALLER: a token with alerts:write cannot pile up
// alerts (each a notification per event, and a rule in every worker's memory). A create past
// a cap is a 409 conflict (DESIGN.md's only code for a 409) whose detail names the cap, with
// no Location and a `limit` member (the setting and its value) that tells it from the key's
// 409 by a field, and it writes nothing; every status counts; a replay under an
// Idempotency-Key is still a replay; creates racing for the last slot make exactly one alert.
// MAX_ALERTS_PER_CALLER's default gives a full book of MAX_WALLETS_PER_CALLER wallets four each.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auth, insertWallet } from "../helpers/alert-fixtures.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createContract, type OpenApiDocument } from "../helpers/openapi-contract.ts";
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

type Cap = "MAX_ALERTS_PER_WALLET" | "MAX_ALERTS_PER_CALLER";

/**
 * Asserts a cap's refusal: a 409 conflict naming the cap, without the Location of a key's alert,
 * and with the `limit` member that names the setting and its value (by default the small app's).
 */
function capRefused(res: Awaited<ReturnType<typeof create>>, cap: Cap = "MAX_ALERTS_PER_WALLET", max = cap === "MAX_ALERTS_PER_WALLET" ? PER_WALLET : PER_CALLER) {
  const problem = expectProblem(res, 409, "conflict");
  expect(problem.detail).toContain(`${cap}=${max}`);
  expect(res.json().limit).toEqual({ setting: cap, max });
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
    const problem = capRefused(refused, "MAX_ALERTS_PER_WALLET", 50);
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
    // The key's 409 is no cap's: no `limit`, and Location names the alert the key made.
    expect(changed.json()).not.toHaveProperty("limit");
    expect(changed.headers.location).toBe(`/v1/risk/alerts/${first.json().alertId}`);
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

  it("lets a caller give each of MAX_WALLETS_PER_CALLER's 10,000 wallets four alerts (MAX_ALERTS_PER_CALLER defaults to 40,000), and refuses the 40,001st with its limit", async () => {
    const { sub, token } = await caller(defaults, "nina");
    // A full book, as an earlier onboarding left it: 10,000 wallets, four alerts each but the last wallet's fourth.
    await defaults.deps.sql`
      insert into tracked_wallets (id, owner, address)
      select 'wal_book_' || i, ${sub}, 'book' || i from generate_series(1, 10000) as i`;
    await defaults.deps.sql`
      insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, recipient)
      select 'alr_book_' || i || '_' || n, ${sub}, 'wal_book_' || i, 'unusual_activity', 10, 'sms', '+14155550123'
      from generate_series(1, 10000) as i, generate_series(1, 4) as n
      where not (i = 10000 and n = 4)`;
    expect(await storedAlerts(defaults, sub)).toBe(39_999);

    await created(defaults, token, "wal_book_10000");
    const refused = capRefused(await create(defaults, token, "wal_book_1"), "MAX_ALERTS_PER_CALLER", 40_000);
    expect(refused.detail).toContain("you have 40000 alerts already");
    expect(await storedAlerts(defaults, sub)).toBe(40_000);
  });

  it("documents the `limit` member on the Problem schema and on the create's 409, and answers the cap's 409 as documented", async () => {
    const document = (await small.app.inject({ url: "/v1/openapi.json" })).json<OpenApiDocument>();
    const problem = (document as { components?: { schemas?: Record<string, { properties?: Record<string, unknown>; required?: string[] }> } })
      .components?.schemas?.Problem;
    expect(problem?.required ?? []).not.toContain("limit");
    const limit = problem?.properties?.limit as { description?: string; properties?: Record<string, { enum?: string[] }>; required?: string[] };
    expect(limit?.description).toContain("present on a 409 that a cap refused: waiting does not help; the setting names the cap");
    expect(limit.properties?.setting?.enum).toEqual(["MAX_ALERTS_PER_CALLER", "MAX_ALERTS_PER_WALLET", "MAX_WALLETS_PER_CALLER"]);
    expect(limit.required).toEqual(["setting", "max"]);
    const description = (document.paths["/v1/risk/alerts"]!.post!.responses["409"] as { description: string }).description;
    expect(description).toContain("limit");

    const { sub, token } = await caller(small, "olga");
    const { walletId } = await insertWallet(small, sub);
    for (let i = 0; i < PER_WALLET; i++) await created(small, token, walletId);
    const refused = await create(small, token, walletId);
    capRefused(refused);
    expect(createContract(document).check("POST", "/v1/risk/alerts", refused)).toEqual([]);
  });
});
