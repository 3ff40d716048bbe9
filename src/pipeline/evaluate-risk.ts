// Evaluates score changes that no batch evaluated (those a label change caused) against the
// risk_score_increase alerts of their addresses, in one Postgres transaction that also marks
// them evaluated. An address's changes are evaluated in the order they happened: a job takes
// the older changes of its addresses still owed an evaluation along with its own (their own
// job may be late, or lost with Redis), because each firing moves the alert's baseline.
// Changes already evaluated (a replayed job, or taken along by another) are skipped under lock.
import { loadScoreAlerts, loadScoreChanges } from "../db/queries/pipeline.ts";
import { lockOpenScoreChanges, markScoreChangesEvaluated } from "../db/queries/pipeline-writes.ts";
import { enqueueDeliveries } from "../queue/deliveries.ts";
import type { PipelineDeps } from "./evaluate-batch.ts";
import type { WalletRisk } from "./notification.ts";
import { recordEvents } from "./record-events.ts";
import { retryTransaction } from "./retry.ts";
import { groupByAddress } from "./transaction-firings.ts";

export type RiskOutcome = { evaluated: number; events: number; notifications: number };

export async function evaluateScoreChanges(deps: PipelineDeps, ids: readonly number[]): Promise<RiskOutcome> {
  const open = (await loadScoreChanges(deps.sql, ids)).filter((change) => !change.evaluated);
  if (open.length === 0) return { evaluated: 0, events: 0, notifications: 0 };
  const addresses = [...new Set(open.map((c) => c.address))];
  const throughId = Math.max(...open.map((c) => c.id));

  const recorded = await retryTransaction(() =>
    deps.sql.begin(async (tx) => {
      const changes = await lockOpenScoreChanges(tx, addresses, throughId);
      // Read here, not before the transaction: an alert created meanwhile counts (loadScoreAlerts).
      const scoreAlerts = groupByAddress(await loadScoreAlerts(tx, addresses));
      // The clock of the writes, read once the changes are locked (and on every retry): a wait
      // for another evaluation's lock must not stamp events and cooldowns before it.
      const now = deps.now();
      // Each payload shows the score and factors of the address's newest change evaluated here.
      const latest = new Map<string, WalletRisk>(changes.map((c) => [c.address, { score: c.score, factors: c.factors }]));
      const result = await recordEvents(tx, {
        now,
        txFirings: [],
        changes,
        scoreAlerts,
        risk: (address) => latest.get(address) ?? { score: 0, factors: [] },
      });
      await markScoreChangesEvaluated(tx, changes.map((c) => c.id), now);
      return { ...result, evaluated: changes.length };
    }),
  );
  await enqueueDeliveries(deps.queues, recorded.deliveries, deps.redis, { nowMs: deps.now().getTime() });
  return { evaluated: recorded.evaluated, events: recorded.events, notifications: recorded.deliveries.length };
}
