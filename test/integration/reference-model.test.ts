// The pipeline against an independent reference model (test/helpers/reference-model.ts, written
// from DESIGN.md sections 4 and 5 and the README, not from the code). Seeded random sequences of
// native ingest batches among a few tracked wallets (two callers on some, transfers between
// tracked wallets, labelled counterparties, large amounts, bursts, failing runs, token transfers,
// repeated deliveries, three months of silence), label changes up and down, alerts created,
// paused, resumed, edited and deleted, are played through the real API and in-process workers,
// each step evaluated before the next, on a clock the test sets. After every step the alert
// events (alert, condition, dedupe key, observed, suppressed) and the score changes must be the
// model's, and at the end every wallet's riskScore and riskFactors as the API shows them. A
// failure names the seed, the step and what differs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannels } from "../../src/notify/channels/index.ts";
import { runWorkers, type RunningWorkers } from "../../src/queue/run-workers.ts";
import { createRandom } from "../../src/sim/random.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createAlert, putLabels, settled, track } from "../helpers/pipeline.ts";
import { heliusLegs } from "../helpers/reference-helius.ts";
import { createReferenceModel, type Condition, type ModelEvent, type ModelScoreChange } from "../helpers/reference-model.ts";
import { BOB_WALLETS, LABELS, WALLETS, scenario, type AlertSpec } from "../helpers/reference-scenario.ts";
import { bearer } from "../helpers/seed.ts";

const HELIUS_SECRET = "reference-model-helius-header-0123";
const SEEDS = [11, 22, 33, 44, 55, 66, 77, 88];

// ---------------------------------------------------------------------------------------------
// Playing a scenario through the API and the workers, and through the model.

let t: TestApp;
let workers: RunningWorkers;
/** The workers' clock (Unix seconds), set by each step. */
let now = 1_717_000_000;

beforeAll(async () => {
  t = await startTestApp("reference-model", { HELIUS_AUTH_HEADER: HELIUS_SECRET });
  workers = runWorkers({ ...t.deps, now: () => new Date(now * 1000), channels: createChannels(t.config, t.deps.logger) }, { queues: ["transactions", "risk"] });
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
});

type Comparable = { events: string[]; changes: string[] };

async function play(seed: number): Promise<{ divergence: string | null; modelEvents: ModelEvent[]; factors: Set<string> }> {
  const sc = scenario(seed);
  const model = createReferenceModel();
  const tokens = { alice: await t.token(`alice-${seed}`), bob: await t.token(`bob-${seed}`) };
  const names = new Map<string, string>([
    ...sc.wallets.map((a, i): [string, string] => [a, `w${i}`]),
    ...sc.labelled.map((a, i): [string, string] => [a, `L${i}`]),
    ...sc.strangers.map((a, i): [string, string] => [a, `s${i}`]),
  ]);
  const name = (address: string) => names.get(address) ?? address.slice(0, 6);
  const walletIds = new Map<string, string>(); // "owner w" → walletId
  const slots: Array<{ id: string; spec: AlertSpec }> = [];
  const alertName = new Map<string, string>();
  const allModelEvents: ModelEvent[] = [];
  const factors = new Set<string>();
  let seenEvents = new Set<string>();
  let historyId = (await t.deps.sql<{ id: number }[]>`select coalesce(max(id), 0)::int as id from risk_score_history`)[0]!.id;
  (await t.deps.sql<{ id: string }[]>`select id from alert_events`).forEach((e) => seenEvents.add(e.id));

  const trackWallet = async (owner: "alice" | "bob", w: number) => {
    const { walletId } = await track(t, tokens[owner], sc.wallets[w]!);
    walletIds.set(`${owner} ${w}`, walletId);
    model.track(sc.wallets[w]!);
  };
  const addAlert = async (spec: AlertSpec) => {
    const id = await createAlert(t, tokens[spec.owner], {
      walletId: walletIds.get(`${spec.owner} ${spec.wallet}`)!,
      condition: spec.condition,
      threshold: spec.threshold,
      cooldownSeconds: spec.cooldownSeconds,
      ...(spec.token !== null ? { token: spec.token } : {}),
    });
    slots.push({ id, spec });
    alertName.set(id, `${spec.owner}/w${spec.wallet}/${spec.condition}#${slots.length - 1}`);
    model.createAlert({ id, address: sc.wallets[spec.wallet]!, condition: spec.condition, threshold: spec.threshold, token: spec.token, cooldownSeconds: spec.cooldownSeconds });
  };
  const describeEvent = (e: ModelEvent & { notifications?: number }) =>
    `${alertName.get(e.alertId)} ${e.condition} ${e.key.startsWith("score ") ? e.key.replace(/score (\S+)/, (_, a: string) => `score ${name(a)}`) : `tx ${e.key.slice(0, 8)}`} observed=${e.observed}` +
    (e.suppressed ? " suppressed" : "") +
    (e.notified ? ` notified ${e.notified.score} [${e.notified.factors.join(",")}]` : "") +
    // One notification for a sent event, none for a suppressed one; anything else is shown.
    (e.notifications !== undefined && e.notifications !== (e.suppressed ? 0 : 1) ? ` notifications=${e.notifications}` : "");
  const describeChange = (c: ModelScoreChange) => `${name(c.address)} ${c.previous}->${c.score} [${c.factors.join(",")}]`;

  /** What the pipeline recorded since the last look. */
  async function pipelineSide(): Promise<Comparable> {
    const history = await t.deps.sql<{ id: number; address: string; previous: number; score: number; factors: string[] }[]>`
      select id::int, address, previous_score as previous, score, factors from risk_score_history where id > ${historyId} order by id`;
    historyId = history.at(-1)?.id ?? historyId;
    const rows = await t.deps.sql<
      Array<{ id: string; alertId: string; dedupeKey: string; condition: Condition; observed: number; suppressed: boolean; notifications: number; score: number | null; factors: string[] | null }>
    >`
      select e.id, e.alert_id as "alertId", e.dedupe_key as "dedupeKey", e.condition, e.observed::float8 as observed, e.suppressed,
             count(n.id)::int as notifications, min((n.payload->'data'->>'riskScore')::int) as score,
             (array_agg(n.payload->'data'->'riskFactors'))[1] as factors
      from alert_events e left join notifications n on n.event_id = e.id
      group by e.id`;
    const fresh = rows.filter((r) => !seenEvents.has(r.id));
    seenEvents = new Set(rows.map((r) => r.id));
    const events: Array<ModelEvent & { notifications: number }> = [];
    for (const r of fresh) {
      let key = r.dedupeKey;
      if (key.startsWith("score:")) {
        const [change] = await t.deps.sql<{ address: string; previous: number; score: number }[]>`
          select address, previous_score as previous, score from risk_score_history where id = ${Number(key.slice(6))}`;
        key = `score ${change!.address} ${change!.previous}->${change!.score}`;
      }
      const notified = r.score === null ? undefined : { score: r.score, factors: [...(r.factors ?? [])].sort() };
      events.push({ alertId: r.alertId, condition: r.condition, key, observed: r.observed, suppressed: r.suppressed, notifications: r.notifications, ...(notified ? { notified } : {}) });
    }
    return {
      events: events.map(describeEvent).sort(),
      changes: history.map((h) => describeChange({ ...h, factors: [...h.factors].sort() })).sort(),
    };
  }
  function modelSide(): Comparable {
    const { events, changes } = model.take();
    allModelEvents.push(...events);
    for (const change of changes) for (const factor of change.factors) factors.add(factor);
    return { events: events.map(describeEvent).sort(), changes: changes.map(describeChange).sort() };
  }
  async function scoresDiffer(): Promise<string | null> {
    const expected = model.scores();
    const rows = await t.deps.sql<{ address: string; score: number; factors: string[] }[]>`
      select address, risk_score as score, risk_factors as factors from address_state where address = any(${[...expected.keys()]}::text[])`;
    const actual = new Map(rows.map((r) => [r.address, { score: r.score, factors: [...r.factors].sort() }]));
    const lines = [...expected].flatMap(([address, want]) => {
      const got = actual.get(address) ?? { score: 0, factors: [] };
      return JSON.stringify(got) === JSON.stringify(want) ? [] : [`${name(address)}: model ${JSON.stringify(want)}, pipeline ${JSON.stringify(got)}`];
    });
    return lines.length > 0 ? lines.join("\n") : null;
  }

  // Setup: the wallets, a balance, the first alerts and labels.
  now = sc.steps[0]!.now - 600;
  for (let w = 0; w < WALLETS; w++) await trackWallet("alice", w);
  for (const w of BOB_WALLETS) await trackWallet("bob", w);
  for (const { wallet, balance } of sc.balances) {
    const res = await t.app.inject({ method: "POST", url: "/v1/ingest/accounts", headers: bearer(tokens.alice), payload: { accounts: [{ address: sc.wallets[wallet], balance, tokenAccounts: [], nfts: [] }] } });
    expect(res.statusCode, res.body).toBe(202);
    model.setBalance(sc.wallets[wallet]!, balance);
  }
  const initialLabels = LABELS.map((l, i) => ({ address: sc.labelled[i]!, ...l }));
  expect((await putLabels(t, tokens.alice, initialLabels)).statusCode).toBe(200);
  model.putLabels(initialLabels, now);
  for (const spec of sc.alerts) await addAlert(spec);
  await settled(t);
  await pipelineSide();
  model.take();

  // Now and then a step is evaluated exactly when an alert's cooldown ends, or a second before:
  // the clock jumps there and stays ahead by as much.
  const boundaries = createRandom(seed, 1);
  let ahead = 0;
  for (const [s, step] of sc.steps.entries()) {
    now = step.now + ahead;
    // An alert of a wallet this step's transactions touch, so that it may well fire at that moment.
    const moved = step.kind === "ingest" ? step.txs : step.kind === "helius" ? step.items.flatMap(heliusLegs) : [];
    const touched = new Set(moved.flatMap((x) => [x.from, x.to]));
    const cooling = slots
      .flatMap(({ id }) => model.alert(id) ?? [])
      .filter((a) => a.cooldownSeconds > 0 && a.lastNotifiedAt !== null && touched.has(a.address));
    if (cooling.length > 0 && boundaries.chance(0.5)) {
      const alert = boundaries.pick(cooling);
      const at = alert.lastNotifiedAt! + alert.cooldownSeconds - (boundaries.chance(0.5) ? 0 : 1);
      if (at > now) {
        ahead += at - now;
        now = at;
      }
    }
    const slot = "slot" in step ? slots[step.slot] : undefined;
    const patch = async (payload: Record<string, unknown>) => {
      const res = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${slot!.id}`, headers: bearer(tokens[slot!.spec.owner]), payload });
      expect(res.statusCode, res.body).toBe(200);
    };
    let what: string = step.kind;
    switch (step.kind) {
      case "ingest": {
        const res = await t.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: bearer(tokens.alice), payload: { transactions: step.txs } });
        expect(res.statusCode, res.body).toBe(202);
        model.ingest(step.txs, now);
        what = `ingest ${step.note}: ${step.txs.map((x) => `${name(x.from)}→${name(x.to)} ${x.amount} ${x.token.slice(0, 6)}${x.status === "failed" ? " failed" : ""} ${x.type} @${x.blockTime} ${x.signature.slice(0, 8)}`).join("; ")}`;
        break;
      }
      case "helius": {
        const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: step.items });
        expect(res.statusCode, res.body).toBe(202);
        const legs = step.items.flatMap(heliusLegs);
        // The movements stored: the model's reading of the items, each new item whole.
        const expected = model.ingest(legs, now).map((x) => `${x.signature}/${x.leg} ${x.from}→${x.to} ${x.amount} ${x.token} ${x.mint ?? "-"} ${x.type} ${x.status}`);
        const stored = await t.deps.sql<{ row: string }[]>`
          select signature || '/' || leg || ' ' || from_address || '→' || to_address || ' ' || amount::float8 || ' ' || token || ' ' ||
                 coalesce(mint, '-') || ' ' || type || ' ' || status as row
          from transactions where signature = any(${expected.map((row) => row.split("/")[0]!)}::text[])`;
        expect(stored.map((r) => r.row).sort(), `seed ${seed}, step ${s}: the stored movements`).toEqual([...expected].sort());
        what = `helius: ${legs.map((x) => `${x.signature.slice(0, 8)}/${x.leg} ${name(x.from)}→${name(x.to)} ${x.amount} ${x.token.slice(0, 6)}${x.status === "failed" ? " failed" : ""}`).join("; ")}`;
        break;
      }
      case "labels":
        expect((await putLabels(t, tokens.alice, step.labels)).statusCode).toBe(200);
        model.putLabels(step.labels, now);
        what = `labels ${step.labels.map((l) => `${name(l.address)}=${l.category}/${l.score}`).join(", ")}`;
        break;
      case "alert":
        await addAlert(step.spec);
        what = `create ${alertName.get(slots.at(-1)!.id)} threshold ${step.spec.threshold} token ${step.spec.token} cooldown ${step.spec.cooldownSeconds}`;
        break;
      case "status":
        await patch({ status: step.status });
        model.patchAlert(slot!.id, { status: step.status });
        what = `${step.status} ${alertName.get(slot!.id)}`;
        break;
      case "patch":
        await patch(step.patch);
        model.patchAlert(slot!.id, step.patch);
        what = `patch ${alertName.get(slot!.id)} ${JSON.stringify(step.patch)}`;
        break;
      case "delete": {
        const res = await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${slot!.id}`, headers: bearer(tokens[slot!.spec.owner]) });
        expect(res.statusCode, res.body).toBe(204);
        model.deleteAlert(slot!.id);
        what = `delete ${alertName.get(slot!.id)}`;
        break;
      }
      case "track":
        await trackWallet(step.owner, step.wallet);
        what = `${step.owner} tracks w${step.wallet}`;
        break;
      case "untrack": {
        const res = await t.app.inject({ method: "DELETE", url: `/v1/wallets/${walletIds.get(`${step.owner} ${step.wallet}`)}`, headers: bearer(tokens[step.owner]) });
        expect(res.statusCode, res.body).toBe(204);
        walletIds.delete(`${step.owner} ${step.wallet}`);
        for (const { id, spec } of slots) if (spec.owner === step.owner && spec.wallet === step.wallet && model.alert(id)) model.deleteAlert(id);
        model.untrack(sc.wallets[step.wallet]!);
        what = `${step.owner} deletes w${step.wallet}`;
        break;
      }
    }
    await settled(t);
    const [actual, expected] = [await pipelineSide(), modelSide()];
    const scores = await scoresDiffer();
    if (JSON.stringify(actual) !== JSON.stringify(expected) || scores) {
      return {
        divergence: [
          `seed ${seed}, step ${s} (now ${now}): ${what}`,
          `events  model:    ${JSON.stringify(expected.events, null, 1)}`,
          `events  pipeline: ${JSON.stringify(actual.events, null, 1)}`,
          `changes model:    ${JSON.stringify(expected.changes)}`,
          `changes pipeline: ${JSON.stringify(actual.changes)}`,
          ...(scores ? [`scores differ:\n${scores}`] : []),
        ].join("\n"),
        modelEvents: allModelEvents,
        factors,
      };
    }
  }

  // The API's view at the end: every tracked wallet's riskScore and riskFactors.
  const expected = model.scores();
  for (const [key, walletId] of walletIds) {
    const res = await t.app.inject({ method: "GET", url: `/v1/wallets/${walletId}`, headers: bearer(tokens[key.split(" ")[0] as "alice" | "bob"]) });
    const body = res.json() as { address: string; riskScore: number; riskFactors: string[] };
    const want = expected.get(body.address)!;
    if (body.riskScore !== want.score || JSON.stringify([...body.riskFactors].sort()) !== JSON.stringify(want.factors)) {
      return { divergence: `seed ${seed}, at the end: ${key} shows ${body.riskScore} ${body.riskFactors.join(",")}; the model has ${JSON.stringify(want)}`, modelEvents: allModelEvents, factors };
    }
  }
  return { divergence: null, modelEvents: allModelEvents, factors };
}

describe("the pipeline against the reference model of DESIGN.md sections 4 and 5", () => {
  const fired: ModelEvent[] = [];
  const factors = new Set<string>();
  it.each(SEEDS)("records the model's events, score changes and scores for every step of seeded sequence %i", async (seed) => {
    const { divergence, modelEvents, factors: seen } = await play(seed);
    fired.push(...modelEvents);
    for (const factor of seen) factors.add(factor);
    expect(divergence, `seed ${seed}`).toBeNull();
  }, 60_000);

  it("covers every condition, suppression by a cooldown and each factor in the sequences played", () => {
    expect(new Set(fired.map((e) => e.condition))).toEqual(new Set(["large_transfer", "suspicious_counterparty", "unusual_activity", "risk_score_increase"]));
    expect(fired.some((e) => e.suppressed)).toBe(true);
    expect([...factors].sort()).toEqual([
      "dormant_reactivation",
      "failed_tx_ratio",
      "flagged_counterparty",
      "high_velocity",
      "large_outflow",
      "mixer_interaction",
      "new_counterparty_burst",
      "sanctioned_counterparty",
      "scam_interaction",
    ]);
  });
});
