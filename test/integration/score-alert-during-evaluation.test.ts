// A risk_score_increase alert created while an evaluation is under way, between the
// evaluation's load of the alerts and its write of the scores. It starts from the score as it
// was (the evaluation has not written yet), so the rise the evaluation then writes is its
// rise: it must fire on it, not miss it and fire later on the next rise of any size.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { evaluateBehindHeldBatch } from "../helpers/held-evaluation.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { createAlert, eventsOf, putLabels, track, tx, waitFor } from "../helpers/pipeline.ts";

let t: TestApp;
let alice: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("score-alert-during-evaluation");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

async function store(txs: Parameters<typeof storeTransactionBatch>[1]): Promise<string> {
  return (await storeTransactionBatch(t.deps, txs)).batchId!;
}

describe("a risk_score_increase alert created during an evaluation", () => {
  it("fires on the rise that evaluation writes, observed from the score the alert started at", async () => {
    const wallet = await track(t, alice);
    const scam = randomAddress();
    expect((await putLabels(t, alice, [{ address: scam, category: "scam", score: 90 }])).statusCode).toBe(200);

    // An earlier batch that another evaluation holds (counted, not yet committed) keeps this
    // evaluation waiting after it has loaded the alerts and before it writes scores.
    const ahead = await store([tx({ from: randomAddress(), to: randomAddress(), blockTime: now })]);
    const batch = await store([tx({ from: wallet.address, to: scam, blockTime: now + 1 })]);
    const { evaluation, release } = await evaluateBehindHeldBatch(t, ahead, batch);

    // Created meanwhile: its baseline is the score still stored, 0.
    const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });

    await release();
    expect(await evaluation).toMatchObject({ status: "evaluated", scoreChanges: 1 });
    expect(await eventsOf(t, alertId)).toMatchObject([{ condition: "risk_score_increase", observed: 50 }]);
  });

  it("starts from the score an evaluation is writing, once that evaluation commits", async () => {
    const wallet = await track(t, alice);
    await t.deps.sql`insert into address_state (address) values (${wallet.address}) on conflict (address) do nothing`;
    // The evaluation's write of the new score, its row lock held until commit.
    const release = await holdTransaction(t.deps.sql, async (sql) => {
      await sql`update address_state set risk_score = 50 where address = ${wallet.address}`;
    });
    let created = false;
    const creating = createAlert(t, alice, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 }).then((id) => {
      created = true;
      return id;
    });
    await waitFor("the alert's creation to wait for the score", async () => {
      const [row] = await t.deps.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query ilike '%from address_state%for share%'`;
      return row!.n > 0;
    });
    expect(created).toBe(false);
    await release();
    const alertId = await creating;
    const [alert] = await t.deps.sql<{ baseline: number }[]>`select baseline_score as baseline from alerts where id = ${alertId}`;
    expect(alert!.baseline).toBe(50);
  });
});
