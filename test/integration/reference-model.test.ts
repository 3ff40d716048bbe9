// The pipeline against an independent reference model (test/helpers/reference-model.ts, written
// from DESIGN.md sections 4 and 5 and the README, not from the code). Seeded random sequences of
// native ingest batches among a few tracked wallets (two callers on some, transfers between
// tracked wallets, labelled counterparties, large amounts, bursts, failing runs, token transfers,
// repeated deliveries, three months of silence), label changes up and down, alerts created,
// paused, resumed, edited and deleted, are played through the real API and in-process workers,
// each step evaluated before the next, on a clock the test sets. After every step the alert
// events (alert, condition, dedupe key, observed, suppressed) and the score changes must be the
// model's, and at the end every wallet's riskScore and riskFactors as the API shows them. A
// failure names the seed, the step and what differs. Two more seeds add transactions one to
// five hours late and a wallet with more than 1,000 counterparties, two add waves of
// address-poisoning dust that a wallet partly pays back, and two a burst whose unusual_activity
// limit falls under it at an hour boundary, then an alert re-armed in it (reference-scenario.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannels } from "../../src/notify/channels/index.ts";
import { runWorkers, type RunningWorkers } from "../../src/queue/run-workers.ts";
import { createRandom } from "../../src/sim/random.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { heliusLegs } from "../helpers/reference-helius.ts";
import type { ModelEvent } from "../helpers/reference-model.ts";
import { playScenario, type PlayResult } from "../helpers/reference-play.ts";
import { CROWD, scenario, type ScenarioOptions } from "../helpers/reference-scenario.ts";

const HELIUS_SECRET = "reference-model-helius-header-0123";
const SEEDS: Array<[number, ScenarioOptions]> = [
  ...[11, 22, 33, 44, 55, 66, 77, 88].map((seed): [number, ScenarioOptions] => [seed, {}]),
  [101, { veryLate: true, crowd: true }],
  [202, { veryLate: true, crowd: true }],
  [303, { dust: true }],
  [404, { veryLate: true, crowd: true, dust: true }],
  [505, { limitFalls: true }],
  [606, { veryLate: true, crowd: true, limitFalls: true }],
];

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

/** Every step evaluated before the next, on the test's clock. */
function play(seed: number, options: ScenarioOptions): Promise<PlayResult> {
  const sc = scenario(seed, options);
  // Now and then a step is evaluated exactly when an alert's cooldown ends, or a second before:
  // the clock jumps there and stays ahead by as much.
  const boundaries = createRandom(seed, 1);
  let ahead = 0;
  return playScenario({
    t,
    seed,
    sc,
    heliusSecret: HELIUS_SECRET,
    unknowable: new Set(options.crowd ? [sc.wallets[CROWD]!] : []),
    settleBefore: () => true,
    setupClock: () => (now = sc.steps[0]!.now - 600),
    stepClock: (step, model, slots) => {
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
      return now;
    },
  });
}

describe("the pipeline against the reference model of DESIGN.md sections 4 and 5", () => {
  const fired: ModelEvent[] = [];
  const factors = new Set<string>();
  it.each(SEEDS)("records the model's events, score changes and scores for every step of seeded sequence %i %o", async (seed, options) => {
    const { divergence, modelEvents, factors: seen } = await play(seed, options);
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
