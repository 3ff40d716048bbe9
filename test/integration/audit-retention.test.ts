// The retention of the audit trail, run with psql as the README writes it: the archive's prune
// takes the history (alert_changes) of the deleted alerts it prunes, which until 2026-11-28 it
// left behind for good (no foreign key, and out of the API's reach once the archive row was
// gone); the retention script prunes history entries and label loads older than their horizons.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, putLabels, track } from "../helpers/pipeline.ts";
import { runPsql } from "../helpers/psql.ts";
import { readmeSqlBlock } from "../helpers/readme-sql.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;

beforeAll(async () => {
  t = await startTestApp("audit-retention");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t?.close();
});

/** A large_transfer alert by webhook on a new wallet of alice's, with a second history entry (a PATCH of its threshold). */
async function alertWithHistory(): Promise<string> {
  const alertId = await createAlert(t, alice, { walletId: (await track(t, alice)).walletId, condition: "large_transfer", threshold: 1_000 });
  const res = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(alice), payload: { threshold: 2_000 } });
  expect(res.statusCode).toBe(200);
  return alertId;
}

const deleteAlert = async (alertId: string) =>
  expect((await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alertId}`, headers: bearer(alice) })).statusCode).toBe(204);

/** Each alert's history entries, by action, oldest first. */
async function historyOf(alertIds: string[]): Promise<Record<string, string[]>> {
  const rows = await t.deps.sql<{ alertId: string; action: string }[]>`
    select alert_id as "alertId", action from alert_changes where alert_id = any(${alertIds}::text[]) order by id`;
  return Object.fromEntries(alertIds.map((id) => [id, rows.filter((row) => row.alertId === id).map((row) => row.action)]));
}

async function psql(script: string) {
  const run = await runPsql(t.config.databaseUrl, script);
  expect(run.stderr.replace(/^psql:<stdin>:\d+: NOTICE: .*\n/gm, "")).toBe("");
  expect(run.code).toBe(0);
  return run;
}

describe("the README's prune of the archive", () => {
  it("takes the history of the deleted alerts it prunes, and keeps the history of the others, deleted or live", async () => {
    const [old, recent, live] = [await alertWithHistory(), await alertWithHistory(), await alertWithHistory()];
    await deleteAlert(old);
    await deleteAlert(recent);
    await t.deps.sql`update deleted_alerts set deleted_at = now() - interval '8 years' where id = ${old}`;
    expect(await historyOf([old, recent, live])).toEqual({
      [old]: ["created", "updated", "deleted"],
      [recent]: ["created", "updated", "deleted"],
      [live]: ["created", "updated"],
    });

    await psql(readmeSqlBlock("### Risk alerts", "Prune:"));

    expect(await t.deps.sql`select id from deleted_alerts where id = ${old}`).toHaveLength(0);
    expect(await historyOf([old, recent, live])).toEqual({
      [old]: [],
      [recent]: ["created", "updated", "deleted"],
      [live]: ["created", "updated"],
    });
  });
});

describe("the README's retention script", () => {
  it("prunes the history entries and the label loads older than their horizons, of live and deleted alerts alike, and keeps the newer", async () => {
    const [live, deleted] = [await alertWithHistory(), await alertWithHistory()];
    await deleteAlert(deleted);
    // Each alert's creation entry, made 8 years ago; the later entries now.
    await t.deps.sql`update alert_changes set at = now() - interval '8 years' where alert_id in (${live}, ${deleted}) and action = 'created'`;
    const address = randomAddress();
    const load = async (score: number) => {
      const res = await putLabels(t, alice, [{ address, category: "scam", score, source: "vendor" }]);
      expect(res.statusCode).toBe(200);
    };
    await load(70);
    await load(90);
    const [first] = await t.deps.sql<{ loadId: string }[]>`select load_id as "loadId" from label_changes where address = ${address} and score = 70`;
    await t.deps.sql`update label_changes set at = now() - interval '8 years' where load_id = ${first!.loadId}`;

    const run = await psql(readmeSqlBlock("### Retention", "Horizons, in days."));

    expect(await historyOf([live, deleted])).toEqual({ [live]: ["updated"], [deleted]: ["updated", "deleted"] });
    // The deleted alert's archive stays: the archive has its own prune.
    expect(await t.deps.sql`select id from deleted_alerts where id = ${deleted}`).toHaveLength(1);
    const history = await t.app.inject({ url: `/v1/risk/labels/${address}/history`, headers: bearer(alice) });
    expect(history.statusCode).toBe(200);
    expect(history.json<{ changes: { change: string; label: { score: number } }[] }>().changes.map((c) => [c.change, c.label.score])).toEqual([["changed", 90]]);
    expect(run.stderr).toMatch(/alert_changes: 2 deleted/);
    expect(run.stderr).toMatch(/label_changes: 1 deleted/);
  });
});
