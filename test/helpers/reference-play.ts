// Playing a reference scenario (reference-scenario.ts) through the real API and workers and
// through the reference model (reference-model.ts), comparing the two whenever the pipeline has
// caught up: the alert events (alert, condition, dedupe key, observed, suppressed, the
// notification's score and factors), the score changes and every tracked wallet's stored score,
// and at the end riskScore and riskFactors as the API shows them. Used by the reference-model
// tests: one evaluates every step before the next, the other lets ingest run ahead.
import { expect } from "vitest";
import type { TestApp } from "./app.ts";
import { createAlert, putLabels, settled, track } from "./pipeline.ts";
import { heliusLegs } from "./reference-helius.ts";
import { createReferenceModel, type Condition, type ModelEvent, type ModelScoreChange, type ReferenceModel } from "./reference-model.ts";
import { BOB_WALLETS, LABELS, WALLETS, type AlertSpec, type Scenario, type Step } from "./reference-scenario.ts";
import { bearer } from "./seed.ts";

export type Slot = { id: string; spec: AlertSpec };
export type PlayOptions = {
  t: TestApp;
  seed: number;
  sc: Scenario;
  heliusSecret: string;
  /** The clock (Unix seconds) the setup is played at. */
  setupClock: () => number;
  /** The clock a step is played at; the model records the step's events at it. */
  stepClock: (step: Scenario["steps"][number], model: ReferenceModel, slots: readonly Slot[]) => number;
  /** Whether every earlier step must be evaluated before this one is sent (the sides are compared then). */
  settleBefore: (step: Step) => boolean;
  /**
   * Addresses whose new_counterparty_burst the model cannot know (more than 1,000 counterparties:
   * the pipeline's set is trimmed at random). That factor is left out of their score changes and
   * scores on both sides; the rest is compared. No alert may depend on their score.
   */
  unknowable?: ReadonlySet<string>;
  /** Called after each comparison, before the next steps are sent (to hold evaluation back, say). */
  afterCompare?: () => Promise<void>;
  /** Called before waiting for the pipeline to catch up (to let evaluation go on). */
  beforeSettle?: () => Promise<void>;
};
export type PlayResult = { divergence: string | null; modelEvents: ModelEvent[]; factors: Set<string> };

type Comparable = { events: string[]; changes: string[] };
const BURST = "new_counterparty_burst";

export async function playScenario(options: PlayOptions): Promise<PlayResult> {
  const { t, seed, sc, heliusSecret, setupClock, stepClock, settleBefore, unknowable = new Set(), afterCompare, beforeSettle } = options;
  const model = createReferenceModel();
  const tokens = { alice: await t.token(`alice-${seed}`), bob: await t.token(`bob-${seed}`) };
  const names = new Map<string, string>([
    ...sc.wallets.map((a, i): [string, string] => [a, `w${i}`]),
    ...sc.labelled.map((a, i): [string, string] => [a, `L${i}`]),
    ...sc.strangers.map((a, i): [string, string] => [a, `s${i}`]),
  ]);
  const name = (address: string) => names.get(address) ?? address.slice(0, 6);
  const walletIds = new Map<string, string>(); // "owner w" → walletId
  const slots: Slot[] = [];
  const alertName = new Map<string, string>();
  const alertAddress = new Map<string, string>();
  const allModelEvents: ModelEvent[] = [];
  const factors = new Set<string>();
  let seenEvents = new Set<string>();
  let historyId = (await t.deps.sql<{ id: number }[]>`select coalesce(max(id), 0)::int as id from risk_score_history`)[0]!.id;
  (await t.deps.sql<{ id: string }[]>`select id from alert_events`).forEach((e) => seenEvents.add(e.id));
  /** The factors an address's score is compared by. */
  const comparable = (address: string, list: Iterable<string>) => [...list].filter((f) => f !== BURST || !unknowable.has(address)).sort();
  /** An unknowable address's last compared factors, per side: its changes are compared as changes of those. */
  const lastSeen = { model: new Map<string, string>(), pipeline: new Map<string, string>() };
  const changeLines = (side: "model" | "pipeline", list: ModelScoreChange[]) =>
    list.flatMap((c) => {
      if (!unknowable.has(c.address)) return [describeChange(c)];
      const shown = comparable(c.address, c.factors).join(",");
      if (lastSeen[side].get(c.address) === shown) return [];
      lastSeen[side].set(c.address, shown);
      return [`${name(c.address)} [${shown}] (${BURST} not compared)`];
    });

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
    alertAddress.set(id, sc.wallets[spec.wallet]!);
    model.createAlert({ id, address: sc.wallets[spec.wallet]!, condition: spec.condition, threshold: spec.threshold, token: spec.token, cooldownSeconds: spec.cooldownSeconds });
  };
  const describeNotified = (alertId: string, { score, factors }: { score: number; factors: string[] }) => {
    const address = alertAddress.get(alertId)!;
    return unknowable.has(address) ? `notified [${comparable(address, factors).join(",")}]` : `notified ${score} [${factors.join(",")}]`;
  };
  const describeEvent = (e: ModelEvent & { notifications?: number }) =>
    `${alertName.get(e.alertId)} ${e.condition} ${e.key.startsWith("score ") ? e.key.replace(/score (\S+)/, (_, a: string) => `score ${name(a)}`) : `tx ${e.key.slice(0, 8)}`} observed=${e.observed}` +
    (e.suppressed ? " suppressed" : "") +
    (e.notified ? ` ${describeNotified(e.alertId, e.notified)}` : "") +
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
      changes: changeLines("pipeline", history.map((h) => ({ ...h, factors: [...h.factors].sort() }))).sort(),
    };
  }
  function modelSide(): Comparable {
    const { events, changes } = model.take();
    allModelEvents.push(...events);
    for (const change of changes) for (const factor of change.factors) factors.add(factor);
    return { events: events.map(describeEvent).sort(), changes: changeLines("model", changes).sort() };
  }
  async function scoresDiffer(): Promise<string | null> {
    const expected = model.scores();
    const rows = await t.deps.sql<{ address: string; score: number; factors: string[] }[]>`
      select address, risk_score as score, risk_factors as factors from address_state where address = any(${[...expected.keys()]}::text[])`;
    const actual = new Map(rows.map((r) => [r.address, { score: r.score, factors: [...r.factors].sort() }]));
    const lines = [...expected].flatMap(([address, want]) => {
      const got = actual.get(address) ?? { score: 0, factors: [] };
      const shown = (s: { score: number; factors: string[] }) => JSON.stringify(unknowable.has(address) ? { factors: comparable(address, s.factors) } : s);
      return shown(got) === shown(want) ? [] : [`${name(address)}: model ${shown(want)}, pipeline ${shown(got)}`];
    });
    return lines.length > 0 ? lines.join("\n") : null;
  }
  /** Waits for the pipeline to catch up and compares; the steps played since the last comparison name a divergence. */
  const played: string[] = [];
  async function compare(): Promise<string | null> {
    await beforeSettle?.();
    await settled(t, 40_000);
    const [actual, expected] = [await pipelineSide(), modelSide()];
    const scores = await scoresDiffer();
    const steps = played.splice(0);
    if (JSON.stringify(actual) === JSON.stringify(expected) && !scores) {
      await afterCompare?.();
      return null;
    }
    return [
      `seed ${seed}, ${steps.length === 1 ? "step" : "steps"} evaluated since the last comparison:`,
      ...steps.map((line) => `  ${line}`),
      `events  model:    ${JSON.stringify(expected.events, null, 1)}`,
      `events  pipeline: ${JSON.stringify(actual.events, null, 1)}`,
      `changes model:    ${JSON.stringify(expected.changes)}`,
      `changes pipeline: ${JSON.stringify(actual.changes)}`,
      ...(scores ? [`scores differ:\n${scores}`] : []),
    ].join("\n");
  }
  const failed = (divergence: string): PlayResult => ({ divergence, modelEvents: allModelEvents, factors });

  // Setup: the wallets, a balance, the first alerts and labels.
  let now = setupClock();
  for (let w = 0; w < WALLETS; w++) await trackWallet("alice", w);
  for (const w of BOB_WALLETS) await trackWallet("bob", w);
  for (const { wallet, balance } of sc.balances) {
    const res = await t.app.inject({ method: "POST", url: "/v1/ingest/accounts", headers: bearer(tokens.alice), payload: { accounts: [{ address: sc.wallets[wallet], balance, tokenAccounts: [], nfts: [] }] } });
    expect(res.statusCode, res.body).toBe(202);
    model.setBalance(sc.wallets[wallet]!, balance);
  }
  for (const w of sc.extraWallets ?? []) await trackWallet("alice", w);
  const initialLabels = LABELS.map((l, i) => ({ address: sc.labelled[i]!, ...l }));
  expect((await putLabels(t, tokens.alice, initialLabels)).statusCode).toBe(200);
  model.putLabels(initialLabels, now);
  for (const spec of sc.alerts) await addAlert(spec);
  await settled(t);
  await pipelineSide();
  model.take();
  await afterCompare?.();

  for (const [s, step] of sc.steps.entries()) {
    if (settleBefore(step) && played.length > 0) {
      const divergence = await compare();
      if (divergence) return failed(divergence);
    }
    now = stepClock(step, model, slots);
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
        const shown = step.txs.length > 30 ? [...step.txs.slice(0, 3), ...step.txs.slice(-3)] : step.txs;
        what = `ingest ${step.note}${shown.length < step.txs.length ? ` (${step.txs.length}, first and last 3)` : ""}: ${shown.map((x) => `${name(x.from)}→${name(x.to)} ${x.amount} ${x.token.slice(0, 6)}${x.status === "failed" ? " failed" : ""} ${x.type} @${x.blockTime} ${x.signature.slice(0, 8)}`).join("; ")}`;
        break;
      }
      case "helius": {
        const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: heliusSecret }, payload: step.items });
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
    played.push(`step ${s} (now ${now}): ${what}`);
  }
  const divergence = await compare();
  if (divergence) return failed(divergence);

  // The API's view at the end: every tracked wallet's riskScore and riskFactors.
  const expected = model.scores();
  for (const [key, walletId] of walletIds) {
    const res = await t.app.inject({ method: "GET", url: `/v1/wallets/${walletId}`, headers: bearer(tokens[key.split(" ")[0] as "alice" | "bob"]) });
    const body = res.json() as { address: string; riskScore: number; riskFactors: string[] };
    const want = expected.get(body.address)!;
    const unknown = unknowable.has(body.address);
    if ((!unknown && body.riskScore !== want.score) || JSON.stringify(comparable(body.address, body.riskFactors)) !== JSON.stringify(comparable(body.address, want.factors))) {
      return failed(`seed ${seed}, at the end: ${key} shows ${body.riskScore} ${body.riskFactors.join(",")}; the model has ${JSON.stringify(want)}`);
    }
  }
  return { divergence: null, modelEvents: allModelEvents, factors };
}
