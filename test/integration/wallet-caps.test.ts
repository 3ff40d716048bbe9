// MAX_WALLETS_PER_CALLER: a token with wallets:write cannot track addresses without end (every
// tracked address costs every evaluation work: its activity counters, its score). A create
// past the cap is a 409 conflict (DESIGN.md's only code for a 409) whose detail names the cap
// and says a delete frees a slot, with no Location and a `limit` member (the setting and its
// value; "already tracked" has none), and it writes nothing; a retry of a create
// that succeeded (the address tracked already) is still answered with that wallet; creates
// racing for the last slot make exactly one wallet; wallets past a lowered cap are kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createApiClient } from "../../src/sim/client.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createContract, type Contract, type OpenApiDocument } from "../helpers/openapi-contract.ts";
import { bearer, expectProblem } from "../helpers/seed.ts";

const PER_CALLER = 3;

let defaults: TestApp;
let small: TestApp;

beforeAll(async () => {
  defaults = await startTestApp("wallet-caps-defaults");
  small = await startTestApp("wallet-caps", { MAX_WALLETS_PER_CALLER: String(PER_CALLER) });
});
afterAll(async () => {
  await defaults?.close();
  await small?.close();
});

const create = (t: TestApp, token: string, address: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: "POST", url: "/v1/wallets", headers: { ...bearer(token), ...headers }, payload: { address } });

/** Tracks a new address and requires a 201; the new wallet's id. */
async function created(t: TestApp, token: string, address = randomAddress()): Promise<string> {
  const res = await create(t, token, address);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().walletId as string;
}

const storedWallets = async (t: TestApp, owner: string): Promise<number> =>
  (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from tracked_wallets where owner = ${owner}`)[0]!.n;

/** Wallets written straight into PostgreSQL (as an earlier version, without the cap, let a caller track them). */
async function insertWallets(t: TestApp, owner: string, count: number): Promise<void> {
  await t.deps.sql`
    insert into tracked_wallets (id, owner, address)
    select 'wal_fill_' || ${owner} || '_' || i, ${owner}, 'fill' || ${owner} || i from generate_series(1, ${count}) as i`;
}

/**
 * Asserts the cap's refusal: a 409 conflict naming the cap, without the Location of a wallet in
 * the way, and with the `limit` member that names the setting and its value (by default the small app's).
 */
function capRefused(res: Awaited<ReturnType<typeof create>>, max = PER_CALLER) {
  const problem = expectProblem(res, 409, "conflict");
  expect(problem.detail).toContain(`MAX_WALLETS_PER_CALLER=${max}`);
  expect(res.json().limit).toEqual({ setting: "MAX_WALLETS_PER_CALLER", max });
  expect(res.headers.location).toBeUndefined();
  return problem;
}

/** Asserts "already tracked": a 409 conflict with the Location of the caller's wallet, and no `limit` (no cap refused it). */
function alreadyTracked(res: Awaited<ReturnType<typeof create>>, walletId: string) {
  const problem = expectProblem(res, 409, "conflict");
  expect(res.headers.location).toBe(`/v1/wallets/${walletId}`);
  expect(res.json()).not.toHaveProperty("limit");
  return problem;
}

/** A caller of its own (the cap counts per caller) with a token for it. */
const caller = async (t: TestApp, sub: string) => ({ sub, token: await t.token(sub) });

describe("the cap on a caller's tracked wallets", () => {
  it("tracks the 10,000th wallet (MAX_WALLETS_PER_CALLER defaults to 10,000) and refuses the next with a 409 conflict naming the cap, writing nothing", async () => {
    const { sub, token } = await caller(defaults, "alice");
    await insertWallets(defaults, sub, 9_999);
    await created(defaults, token);

    const address = randomAddress();
    const refused = await create(defaults, token, address);
    const problem = capRefused(refused, 10_000);
    expect(problem.detail).toContain("you track 10000 wallets already");
    expect(problem.detail).toContain("MAX_WALLETS_PER_CALLER=10000");
    expect(problem.detail).toContain("DELETE /v1/wallets/{walletId}");
    expect(problem.detail).toContain("to free a slot");
    expect(refused.json()).toMatchObject({ type: "https://wallet-alerts.dev/problems/conflict", title: "Conflict", status: 409 });
    expect(await storedWallets(defaults, sub)).toBe(10_000);
    // Not even the address's shared state: nothing of the refused create is left.
    const [state] = await defaults.deps.sql<{ n: number }[]>`select count(*)::int as n from address_state where address = ${address}`;
    expect(state!.n).toBe(0);
  });

  it("leaves other callers unaffected by one caller at the cap, the same address included", async () => {
    const full = await caller(small, "carol");
    const addresses = [randomAddress(), randomAddress(), randomAddress()];
    for (const address of addresses) await created(small, full.token, address);
    capRefused(await create(small, full.token, randomAddress()));

    // Another caller tracking one of the same addresses has a wallet of its own, counted apart.
    const other = await caller(small, "dave");
    await created(small, other.token, addresses[0]);
    await created(small, other.token);
    expect(await storedWallets(small, full.sub)).toBe(PER_CALLER);
    expect(await storedWallets(small, other.sub)).toBe(2);
  });

  it("frees a slot when a wallet is deleted", async () => {
    const { sub, token } = await caller(small, "erin");
    const ids = [await created(small, token), await created(small, token), await created(small, token)];
    capRefused(await create(small, token, randomAddress()));

    const deleted = await small.app.inject({ method: "DELETE", url: `/v1/wallets/${ids[1]}`, headers: bearer(token) });
    expect(deleted.statusCode, deleted.body).toBe(204);
    await created(small, token);
    capRefused(await create(small, token, randomAddress()));
    expect(await storedWallets(small, sub)).toBe(PER_CALLER);
  });

  it("answers a retry of a create at the cap as a retry: the 409 naming the wallet that tracks the address, with its Location, Idempotency-Key or not", async () => {
    const { sub, token } = await caller(small, "frank");
    await created(small, token);
    await created(small, token);
    const address = randomAddress();
    const walletId = await created(small, token, address);

    const retries: Record<string, string>[] = [{}, { "idempotency-key": "the-last-slot" }];
    for (const headers of retries) {
      const retry = await create(small, token, address, headers);
      const problem = alreadyTracked(retry, walletId);
      expect(problem.detail).toBe(`address ${address} is already tracked by this caller as wallet ${walletId}`);
    }
    // A new address is a new wallet, and that one the cap refuses.
    capRefused(await create(small, token, randomAddress(), { "idempotency-key": "one-too-many" }));
    expect(await storedWallets(small, sub)).toBe(PER_CALLER);
  });

  it("answers creates of one address racing for the last slot with the one wallet they make, none refused by the cap", async () => {
    const { sub, token } = await caller(small, "grace");
    await created(small, token);
    await created(small, token);
    const address = randomAddress();

    const answers = await Promise.all(Array.from({ length: 8 }, () => create(small, token, address)));
    const made = answers.filter((res) => res.statusCode === 201);
    expect(made.length).toBe(1);
    const walletId = made[0]!.json().walletId as string;
    for (const res of answers.filter((answer) => answer.statusCode !== 201)) {
      expect(alreadyTracked(res, walletId).detail).toContain(`already tracked by this caller as wallet ${walletId}`);
    }
    capRefused(await create(small, token, randomAddress()));
    expect(await storedWallets(small, sub)).toBe(PER_CALLER);
  });

  it("lets exactly as many of many concurrent creates through as the cap has room for, and refuses the rest", async () => {
    const { sub, token } = await caller(small, "heidi");

    const answers = await Promise.all(Array.from({ length: 12 }, () => create(small, token, randomAddress())));
    const statuses = answers.map((res) => res.statusCode).sort();
    expect(statuses).toEqual([...Array(PER_CALLER).fill(201), ...Array(12 - PER_CALLER).fill(409)]);
    for (const res of answers.filter((answer) => answer.statusCode === 409)) capRefused(res);
    expect(await storedWallets(small, sub)).toBe(PER_CALLER);
  });

  it("keeps the wallets a caller has past a lowered cap, and refuses new ones until deletes bring it below", async () => {
    const { sub, token } = await caller(small, "ivan");
    await insertWallets(small, sub, PER_CALLER + 2);

    capRefused(await create(small, token, randomAddress()));
    const list = await small.app.inject({ method: "GET", url: "/v1/wallets?limit=100", headers: bearer(token) });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().total).toBe(PER_CALLER + 2);
    const ids = (list.json().wallets as { walletId: string }[]).map((wallet) => wallet.walletId);
    for (const walletId of ids) {
      const one = await small.app.inject({ method: "GET", url: `/v1/wallets/${walletId}`, headers: bearer(token) });
      expect(one.statusCode, one.body).toBe(200);
    }

    // Refused at 5, 4 and 3 wallets: only the third delete brings it below the cap, and one create fits.
    for (const walletId of ids.slice(0, 3)) {
      capRefused(await create(small, token, randomAddress()));
      const deleted = await small.app.inject({ method: "DELETE", url: `/v1/wallets/${walletId}`, headers: bearer(token) });
      expect(deleted.statusCode, deleted.body).toBe(204);
    }
    await created(small, token);
    capRefused(await create(small, token, randomAddress()));
    expect(await storedWallets(small, sub)).toBe(PER_CALLER);
  });

  it("answers both of the create's 409s as the OpenAPI document describes them", async () => {
    const document = (await small.app.inject({ url: "/v1/openapi.json" })).json<OpenApiDocument>();
    const contract: Contract = createContract(document);
    const conflict = contract.headersOf("POST /v1/wallets", "409");
    expect(conflict.location?.required).not.toBe(true);
    const description = (document.paths["/v1/wallets"]!.post!.responses["409"] as { description: string }).description;
    expect(description).toContain("MAX_WALLETS_PER_CALLER");
    expect(description).toContain("limit");

    const { token } = await caller(small, "judy");
    const address = randomAddress();
    await created(small, token, address);
    await created(small, token);
    await created(small, token);
    const retry = await create(small, token, address);
    const capped = await create(small, token, randomAddress());
    expect([retry.statusCode, capped.statusCode]).toEqual([409, 409]);
    // What tells them apart is a field, not only a header: the cap's answer has `limit`, the retry's none.
    capRefused(capped);
    expect(retry.json()).not.toHaveProperty("limit");
    expect(contract.check("POST", "/v1/wallets", retry)).toEqual([]);
    expect(contract.check("POST", "/v1/wallets", capped)).toEqual([]);
  });

  it("makes the simulator stop at the cap instead of counting the refused wallets as tracked already", async () => {
    await small.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = small.app.server.address() as { port: number };
    const client = createApiClient({ baseUrl: `http://127.0.0.1:${port}`, token: await small.token("kim") });
    try {
      const address = randomAddress();
      expect(await client.trackWallet({ address })).toBe("created");
      expect(await client.trackWallet({ address })).toBe("exists");
      await client.trackWallet({ address: randomAddress() });
      await client.trackWallet({ address: randomAddress() });
      const refused = await client.trackWallet({ address: randomAddress() }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).status).toBe(409);
      expect((refused as Error).message).toContain("MAX_WALLETS_PER_CALLER=3");
    } finally {
      await client.close();
    }
  });
});
