// Writes and the REQUEST_TIMEOUT deadline: a route whose retry would repeat its write (a test
// notification) is never answered 503 at the deadline; and a write answered 503 that lands
// afterwards still clears the process's cached wallet pages, so the caller reads its own write.
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp("deadline-writes", { REQUEST_TIMEOUT: "1s", WALLET_LIST_CACHE_TTL: "60s" });
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

/** Runs `during` while another session holds `table` locked; lets go at `releaseAfterMs` if given. */
async function whileLocked<T>(table: string, during: () => Promise<T>, releaseAfterMs?: number): Promise<T> {
  const holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockHeld = new Promise<void>((resolve) => (locked = resolve));
  const holding = holder.begin(async (tx) => {
    await tx.unsafe(`lock table ${table} in access exclusive mode`);
    locked();
    await released;
  });
  try {
    await lockHeld;
    if (releaseAfterMs !== undefined) setTimeout(release, releaseAfterMs);
    return await during();
  } finally {
    release();
    await holding;
    await holder.end();
  }
}

it("answers a test notification once it is recorded, past the deadline, so that it is never sent twice by a retry", async () => {
  const wallet = await trackWallet(t, token);
  const created = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 10, notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
  });
  const alertId = created.json().alertId as string;
  const test = () => t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(token) });
  // Locked for twice the deadline: a 503 would come first, and its retry would send a second test.
  const answer = await whileLocked("notifications", test, 2_000);
  expect(answer.statusCode, answer.body).toBe(202);
  const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from notifications where alert_id = ${alertId}`;
  expect(row!.n).toBe(1);
});

it("lists a wallet whose create was answered 503 at the deadline and landed afterwards", async () => {
  const list = async () => (await t.app.inject({ url: "/v1/wallets?limit=100", headers: bearer(token) })).json() as { wallets: { address: string }[] };
  await list(); // the page is now served from memory for 60 s
  const address = randomAddress();
  const post = () => t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address } });
  expect((await whileLocked("tracked_wallets", post)).statusCode).toBe(503);
  await waitFor("the create to land", async () => (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from tracked_wallets where address = ${address}`)[0]!.n === 1, 10_000);
  expect((await post()).statusCode).toBe(409);
  await waitFor("the wallet to be listed", async () => (await list()).wallets.some((wallet) => wallet.address === address), 5_000);
});
