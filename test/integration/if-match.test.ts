// Two clients that read an item, change it and write it back must not silently undo each
// other: a wallet's and an alert's GET and PATCH carry an ETag, and a PATCH or DELETE sent with
// If-Match goes ahead only while the item is as that tag says (else 412, and nothing changes).
// Without If-Match the last write wins, but each PATCH still answers with its own write.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { auth, insertWallet } from "../helpers/alert-fixtures.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let alice: string;
beforeAll(async () => {
  t = await startTestApp("if-match");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

type Method = "GET" | "POST" | "PATCH" | "DELETE";
const call = (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url, headers: { ...auth(alice), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });

async function newWallet(): Promise<string> {
  const res = await call("POST", "/v1/wallets", { address: randomAddress(), tags: ["a"] });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ walletId: string }>().walletId;
}

async function newAlert(): Promise<string> {
  const { walletId } = await insertWallet(t, "alice");
  const res = await call("POST", "/v1/risk/alerts", { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ alertId: string }>().alertId;
}

/** The ETag of a GET, which must carry one. */
async function currentTag(url: string): Promise<string> {
  const res = await call("GET", url);
  expect(res.statusCode, res.body).toBe(200);
  const tag = res.headers.etag;
  expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  return tag as string;
}

/** Until `count` sessions of this test's database wait on a lock. */
async function lockWaiters(count: number): Promise<void> {
  await waitFor(`${count} requests to wait on the held row`, async () => {
    const [row] = await t.deps.sql<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    return row!.waiting >= count;
  });
}

/**
 * Two PATCHes of one row, queued behind a held lock on it in this order and let go together:
 * the first one's write commits, the second's follows at once, and the first answers after
 * that. An answer read outside the write's transaction showed the second one's values.
 */
async function racingPatches(url: string, lockRow: string, bodies: [unknown, unknown]) {
  const release = await holdTransaction(t.deps.sql, (tx) => tx.unsafe(lockRow));
  const first = call("PATCH", url, bodies[0]);
  await lockWaiters(1);
  const second = call("PATCH", url, bodies[1]);
  await lockWaiters(2);
  await release();
  return Promise.all([first, second]);
}

describe("wallets", () => {
  it("answers two racing PATCHes each with its own write, and the later one stands", async () => {
    for (let round = 0; round < 5; round += 1) {
      const walletId = await newWallet();
      const [bot1, bot2] = await racingPatches(`/v1/wallets/${walletId}`, `select 1 from tracked_wallets where id = '${walletId}' for update`, [
        { tags: ["a", "bot1"] },
        { tags: ["a", "bot2"] },
      ]);
      expect([bot1.statusCode, bot2.statusCode]).toEqual([200, 200]);
      expect(bot1.json().tags).toEqual(["a", "bot1"]);
      expect(bot2.json().tags).toEqual(["a", "bot2"]);
      expect((await call("GET", `/v1/wallets/${walletId}`)).json().tags).toEqual(["a", "bot2"]);
    }
  });

  it("sends an ETag on GET and PATCH: the PATCH's is the next GET's, and it changes with the wallet, also when ingest changed it", async () => {
    const walletId = await newWallet();
    const url = `/v1/wallets/${walletId}`;
    const before = await currentTag(url);
    expect(await currentTag(url)).toBe(before);
    const patched = await call("PATCH", url, { alias: "Treasury" });
    expect(patched.statusCode).toBe(200);
    expect(patched.headers.etag).not.toBe(before);
    expect(await currentTag(url)).toBe(patched.headers.etag);
    // Not a PATCH: the wallet's chain data, as a snapshot or an evaluation writes it.
    await t.deps.sql`update address_state set risk_score = 42 where address = (select address from tracked_wallets where id = ${walletId})`;
    expect(await currentTag(url)).not.toBe(patched.headers.etag);
  });

  it("refuses a PATCH whose If-Match is stale with 412 precondition_failed and changes nothing: the second of two read-modify-writes", async () => {
    const walletId = await newWallet();
    const url = `/v1/wallets/${walletId}`;
    const read = await currentTag(url);
    const bot1 = await call("PATCH", url, { tags: ["a", "bot1"] }, { "if-match": read });
    expect(bot1.statusCode, bot1.body).toBe(200);
    const bot2 = await call("PATCH", url, { tags: ["a", "bot2"] }, { "if-match": read });
    expect(bot2.statusCode).toBe(412);
    expect(bot2.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(bot2.json()).toMatchObject({ status: 412, code: "precondition_failed", detail: expect.stringContaining(`wallet ${walletId}`) });
    const now = await call("GET", url);
    expect(now.json().tags).toEqual(["a", "bot1"]);
    expect(now.headers.etag).toBe(bot1.headers.etag);
  });

  it("takes a PATCH whose If-Match is the current ETag (one of a list, too) and answers with the new one", async () => {
    const walletId = await newWallet();
    const url = `/v1/wallets/${walletId}`;
    const read = await currentTag(url);
    const res = await call("PATCH", url, { tags: ["a", "b"] }, { "if-match": `"stale0000000000000000", ${read}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().tags).toEqual(["a", "b"]);
    expect(res.headers.etag).not.toBe(read);
    expect(await currentTag(url)).toBe(res.headers.etag);
  });

  it("matches any existing wallet with If-Match: *, never with a weak tag, and refuses a malformed If-Match with 400", async () => {
    const walletId = await newWallet();
    const url = `/v1/wallets/${walletId}`;
    expect((await call("PATCH", url, { alias: "Star" }, { "if-match": "*" })).statusCode).toBe(200);
    const read = await currentTag(url);
    expect((await call("PATCH", url, { alias: "Weak" }, { "if-match": `W/${read}` })).statusCode).toBe(412);
    for (const malformed of ["nope", "", `${read} x`, `*, ${read}`]) {
      const res = await call("PATCH", url, { alias: "Bad" }, { "if-match": malformed });
      expect(res.statusCode, malformed).toBe(400);
      expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(["headers.if-match"]);
    }
    expect((await call("GET", url)).json().alias).toBe("Star");
    // A wallet that does not exist is a 404, If-Match or not (RFC 9110 13.2.1).
    expect((await call("PATCH", "/v1/wallets/wal_01m8gqenacjxp4wxa0p44pn4ya", { alias: "x" }, { "if-match": "*" })).statusCode).toBe(404);
  });

  it("deletes under If-Match only while the wallet is as read: 412 and kept when it changed, 204 with its current ETag", async () => {
    const walletId = await newWallet();
    const url = `/v1/wallets/${walletId}`;
    const read = await currentTag(url);
    expect((await call("PATCH", url, { alias: "Changed meanwhile" })).statusCode).toBe(200);
    expect((await call("DELETE", url, undefined, { "if-match": read })).statusCode).toBe(412);
    expect((await call("GET", url)).statusCode).toBe(200);
    expect((await call("DELETE", url, undefined, { "if-match": await currentTag(url) })).statusCode).toBe(204);
    expect((await call("GET", url)).statusCode).toBe(404);
  });
});

describe("alerts", () => {
  it("answers two racing PATCHes each with its own write", async () => {
    for (let round = 0; round < 3; round += 1) {
      const alertId = await newAlert();
      const [first, second] = await racingPatches(`/v1/risk/alerts/${alertId}`, `select 1 from alerts where id = '${alertId}' for update`, [
        { threshold: 7 },
        { threshold: 9 },
      ]);
      expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
      expect(first.json().threshold).toBe(7);
      expect(second.json().threshold).toBe(9);
    }
  });

  it("sends an ETag on GET and PATCH that changes with the alert, also when the service disabled it", async () => {
    const alertId = await newAlert();
    const url = `/v1/risk/alerts/${alertId}`;
    const before = await currentTag(url);
    const patched = await call("PATCH", url, { cooldownSeconds: 60 });
    expect(patched.statusCode).toBe(200);
    expect(patched.headers.etag).not.toBe(before);
    expect(await currentTag(url)).toBe(patched.headers.etag);
    await t.deps.sql`update alerts set status = 'disabled', disabled_reason = 'the webhook endpoint answered 410 Gone' where id = ${alertId}`;
    expect(await currentTag(url)).not.toBe(patched.headers.etag);
  });

  it("refuses a PATCH whose If-Match is stale with 412 and changes nothing; takes one with the current ETag, a resume too", async () => {
    const alertId = await newAlert();
    const url = `/v1/risk/alerts/${alertId}`;
    const read = await currentTag(url);
    const paused = await call("PATCH", url, { status: "paused" }, { "if-match": read });
    expect(paused.statusCode, paused.body).toBe(200);
    const stale = await call("PATCH", url, { threshold: 9 }, { "if-match": read });
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toMatchObject({ code: "precondition_failed", detail: expect.stringContaining(`alert ${alertId}`) });
    expect((await call("GET", url)).json()).toMatchObject({ status: "paused", threshold: 5 });
    // A resume takes the score's lock before the alert's: under If-Match too.
    const resumed = await call("PATCH", url, { status: "active", threshold: 9 }, { "if-match": paused.headers.etag as string });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json()).toMatchObject({ status: "active", threshold: 9 });
    expect(await currentTag(url)).toBe(resumed.headers.etag);
  });

  it("deletes under If-Match only while the alert is as read: 412 and kept when it changed, 204 with its current ETag", async () => {
    const alertId = await newAlert();
    const url = `/v1/risk/alerts/${alertId}`;
    const read = await currentTag(url);
    expect((await call("PATCH", url, { status: "paused" })).statusCode).toBe(200);
    expect((await call("DELETE", url, undefined, { "if-match": read })).statusCode).toBe(412);
    expect((await call("GET", url)).statusCode).toBe(200);
    expect((await call("DELETE", url, undefined, { "if-match": "*" })).statusCode).toBe(204);
    expect((await call("DELETE", url, undefined, { "if-match": "*" })).statusCode).toBe(404);
  });
});
