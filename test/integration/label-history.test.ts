// Who changed which label, in which load (a compliance review): each PUT or DELETE of
// /v1/risk/labels is a load with an id; each label it adds, changes or removes is recorded
// (label_changes) with the load and its caller, read back at GET /v1/risk/labels/{address}/history;
// the score changes it causes name the load. A label loaded again as it is is no change.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, expectProblem, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let alice: string;
let bob: string;
let carol: string;
let clock = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("label-history");
  workers = startWorkers(t);
  alice = await t.token("alice");
  bob = await t.token("ops-bob", "risk:write");
  carol = await t.token("ops-carol", "risk:write");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

type Label = { address: string; category: string; score: number; source?: string | null };
type Change = { loadId: string; at: string; by: string; source: string | null; change: string; previous: unknown; label: unknown };
type History = { changes: Change[]; hasMore: boolean };

const put = (token: string, labels: Label[]) => t.app.inject({ method: "PUT", url: "/v1/risk/labels", headers: bearer(token), payload: { labels } });
const remove = (token: string, payload: { addresses: string[]; source?: string | null }) =>
  t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(token), payload });
const historyOf = (address: string, query = "", token = bob) => t.app.inject({ url: `/v1/risk/labels/${address}/history${query}`, headers: bearer(token) });
const storedLabel = async (address: string) =>
  (await t.deps.sql<{ updatedBy: string; updatedAt: string }[]>`
    select updated_by as "updatedBy", updated_at::text as "updatedAt" from risk_labels where address = ${address}`)[0];
const changeRows = async (address: string) => (await t.deps.sql`select 1 from label_changes where address = ${address}`).length;
const scoreHistoryOf = (address: string) =>
  t.deps.sql<{ previous: number; score: number; cause: string }[]>`
    select previous_score as previous, score, cause from risk_score_history where address = ${address} and cause like 'labels%' order by id`;

describe("label loads on record", () => {
  it("keeps ops-bob's load on a label ops-carol loads again unchanged, and records ops-carol's removal, each score change naming its load", async () => {
    const wallet = await track(t, alice);
    const counterparty = randomAddress();
    await ingestTransactions(t, alice, [tx({ from: wallet.address, to: counterparty, amount: 1, blockTime: clock++ })]);
    await settled(t);
    const label = { address: counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" };

    const bobs = await put(bob, [label]);
    expect(bobs.statusCode, bobs.body).toBe(200);
    const bobLoad = bobs.json<{ loadId: string }>().loadId;
    expect(bobs.json()).toEqual({ upserted: 1, changed: 1, loadId: expect.stringMatching(/^lld_/) });
    await settled(t);
    const set = await storedLabel(counterparty);
    expect(set?.updatedBy).toBe("ops-bob");

    // The same label again: stored already, so nothing moves, and nothing is recorded or rescored.
    const carols = await put(carol, [label]);
    expect(carols.json()).toEqual({ upserted: 1, changed: 0, loadId: expect.stringMatching(/^lld_/) });
    expect(carols.json<{ loadId: string }>().loadId).not.toBe(bobLoad);
    await settled(t);
    expect(await storedLabel(counterparty)).toEqual(set);
    expect(await changeRows(counterparty)).toBe(1);

    const removal = await remove(carol, { addresses: [counterparty], source: "ofac-sdn" });
    expect(removal.json()).toEqual({ removed: 1, loadId: expect.stringMatching(/^lld_/) });
    const carolLoad = removal.json<{ loadId: string }>().loadId;
    await settled(t);

    const history = await historyOf(counterparty);
    expect(history.statusCode, history.body).toBe(200);
    const body = history.json<History>();
    expect(body).toEqual({
      changes: [
        {
          loadId: bobLoad,
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          by: "ops-bob",
          source: "ofac-sdn",
          change: "added",
          previous: null,
          label: { category: "sanctioned", score: 100 },
        },
        {
          loadId: carolLoad,
          at: expect.any(String),
          by: "ops-carol",
          source: "ofac-sdn",
          change: "removed",
          previous: { category: "sanctioned", score: 100 },
          label: null,
        },
      ],
      hasMore: false,
    });
    expect(Date.parse(body.changes[0]!.at)).toBeLessThanOrEqual(Date.parse(body.changes[1]!.at));
    // The wallet's score rose with ops-bob's load and fell with ops-carol's removal; her re-load moved nothing.
    expect(await scoreHistoryOf(wallet.address)).toEqual([
      { previous: 0, score: 90, cause: `labels:${bobLoad}` },
      { previous: 90, score: 0, cause: `labels:${carolLoad}` },
    ]);
  });

  it("records a changed label with what it was, a label loaded without a source as source null, and another list's label beside it", async () => {
    const address = randomAddress();
    await put(bob, [{ address, category: "mixer", score: 80, source: "vendor-x" }]);
    const changed = await put(carol, [
      { address, category: "scam", score: 70, source: "vendor-x" },
      { address, category: "flagged", score: 50 },
    ]);
    expect(changed.json()).toMatchObject({ upserted: 2, changed: 2 });
    const { changes } = (await historyOf(address)).json<History>();
    expect(changes.map(({ by, source, change, previous, label }) => ({ by, source, change, previous, label }))).toEqual([
      { by: "ops-bob", source: "vendor-x", change: "added", previous: null, label: { category: "mixer", score: 80 } },
      // One load's changes in (address, source) order, a label without a source first.
      { by: "ops-carol", source: null, change: "added", previous: null, label: { category: "flagged", score: 50 } },
      { by: "ops-carol", source: "vendor-x", change: "changed", previous: { category: "mixer", score: 80 }, label: { category: "scam", score: 70 } },
    ]);
    // Only the label that changed moved its updated_by.
    const rows = await t.deps.sql`select source, updated_by as "updatedBy" from risk_labels where address = ${address} order by source`;
    expect(rows).toEqual([
      { source: "", updatedBy: "ops-carol" },
      { source: "vendor-x", updatedBy: "ops-carol" },
    ]);
  });

  it("records the label another load put in place while this one waited as changed from it, not as added", async () => {
    const address = randomAddress();
    // Another load's insert of the same label, not committed yet: the PUT's insert waits for it.
    const release = await holdTransaction(t.deps.sql, (held) =>
      held`insert into risk_labels (address, source, category, score, updated_by) values (${address}, 'vendor-x', 'mixer', 80, 'ops-dan')`,
    );
    const putting = put(bob, [{ address, category: "scam", score: 70, source: "vendor-x" }]);
    await waitForALockWait(t.deps.sql);
    await release();
    expect((await putting).json()).toMatchObject({ upserted: 1, changed: 1 });
    const { changes } = (await historyOf(address)).json<History>();
    expect(changes.map(({ change, previous, label }) => ({ change, previous, label }))).toEqual([
      { change: "changed", previous: { category: "mixer", score: 80 }, label: { category: "scam", score: 70 } },
    ]);
  });
});

describe("GET /v1/risk/labels/{address}/history", () => {
  it("pages by load: after the loadId of the last change, a page holding the whole of its last load, hasMore until the end", async () => {
    const address = randomAddress();
    const first = (await put(bob, [{ address, category: "scam", score: 60, source: "a" }, { address, category: "hack", score: 90, source: "b" }])).json<{ loadId: string }>();
    const second = (await put(carol, [{ address, category: "scam", score: 65, source: "a" }])).json<{ loadId: string }>();
    const third = (await remove(bob, { addresses: [address] })).json<{ loadId: string }>();

    // limit 1, but the first load changed two of the address's labels: both on the page.
    const page1 = (await historyOf(address, "?limit=1")).json<History>();
    expect(page1.changes.map((c) => [c.loadId, c.source])).toEqual([
      [first.loadId, "a"],
      [first.loadId, "b"],
    ]);
    expect(page1.hasMore).toBe(true);
    const page2 = (await historyOf(address, `?limit=1&after=${first.loadId}`)).json<History>();
    expect(page2).toMatchObject({ changes: [{ loadId: second.loadId, change: "changed" }], hasMore: true });
    const page3 = (await historyOf(address, `?limit=1&after=${second.loadId}`)).json<History>();
    expect(page3.changes.map((c) => [c.loadId, c.change])).toEqual([
      [third.loadId, "removed"],
      [third.loadId, "removed"],
    ]);
    expect(page3.hasMore).toBe(false);
    expect((await historyOf(address, `?after=${third.loadId}`)).json()).toEqual({ changes: [], hasMore: false });
  });

  it("answers an empty history for an address never labelled, 400 for an after that is no load of the address, and 403 without risk:write", async () => {
    const never = randomAddress();
    expect((await historyOf(never)).json()).toEqual({ changes: [], hasMore: false });

    const other = randomAddress();
    const load = (await put(bob, [{ address: other, category: "scam", score: 60 }])).json<{ loadId: string }>().loadId;
    expectProblem(await historyOf(never, `?after=${load}`), 400, "validation_failed");
    expectProblem(await historyOf(other, "?after=lld_nothing"), 400, "validation_failed");
    expectProblem(await historyOf("not-an-address"), 400, "validation_failed");
    expectProblem(await historyOf(other, "", await t.token("ops-bob", "alerts:read wallets:read")), 403, "forbidden");
  });
});
