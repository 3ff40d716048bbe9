// GET /v1/wallets pages are served from memory for WALLET_LIST_CACHE_TTL; a write through
// the same process clears them, so a caller always reads its own writes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";

let t: TestApp;
let auth: { authorization: string };
beforeAll(async () => {
  t = await startTestApp("wallet-list-cache", { WALLET_LIST_CACHE_TTL: "1h" });
  auth = { authorization: `Bearer ${await t.token("alice")}` };
});
afterAll(async () => {
  await t.close();
});

const list = async () => (await t.app.inject({ url: "/v1/wallets", headers: auth })).json();

describe("wallet list cache", () => {
  it("serves a repeated page from memory until a write through the API clears it", async () => {
    const address = randomAddress();
    const created = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: auth, payload: { address } });
    expect(created.statusCode).toBe(201);
    expect((await list()).wallets[0].balance).toBe(0);

    // A change made behind this process's back (as the worker or another API process would).
    await t.deps.sql`update address_state set balance = 42 where address = ${address}`;
    expect((await list()).wallets[0].balance).toBe(0);

    const patched = await t.app.inject({
      method: "PATCH",
      url: `/v1/wallets/${created.json().walletId}`,
      headers: auth,
      payload: { alias: "desk" },
    });
    expect(patched.statusCode).toBe(200);
    const after = await list();
    expect(after.wallets[0]).toMatchObject({ balance: 42, alias: "desk" });
  });

  it("keeps callers apart: another caller never sees a cached page of the first", async () => {
    const bob = { authorization: `Bearer ${await t.token("bob")}` };
    const page = (await t.app.inject({ url: "/v1/wallets", headers: bob })).json();
    expect(page).toMatchObject({ wallets: [], total: 0 });
  });

  it("does not let a failed write clear the cache", async () => {
    const [wallet] = (await list()).wallets;
    await t.deps.sql`update address_state set balance = 7 where address = ${wallet.address}`;
    const refused = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: auth, payload: { address: "nope" } });
    expect(refused.statusCode).toBe(400);
    expect((await list()).wallets[0].balance).toBe(42);
  });
});
