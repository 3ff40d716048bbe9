// Evaluates score changes that no batch evaluated (those a label change caused) against the
// risk_score_increase alerts of their addresses, in one Postgres transaction that also marks
// them evaluated. Changes already evaluated (a replayed job) are skipped under lock.
import { loadScoreChanges } from "../db/queries/pipeline.ts";
import { lockUnevaluatedScoreChanges, markScoreChangesEvaluated } from "../db/queries/pipeline-writes.ts";
import { enqueueDeliveries } from "../queue/deliveries.ts";
import type { PipelineDeps } from "./evaluate-batch.ts";
import type { WalletRisk } from "./notification.ts";
import { recordEvents } from "./record-events.ts";
import { retryTransaction } from "./retry.ts";
import { alertsByNeed } from "./alert-rules.ts";

export type RiskOutcome = { evaluated: number; events: number; notifications: number };

export async function evaluateScoreChanges(deps: PipelineDeps, ids: readonly number[]): Promise<RiskOutcome> {
  const open = (await loadScoreChanges(deps.sql, ids)).filter((change) => !change.evaluated);
  if (open.length === 0) return { evaluated: 0, events: 0, notifications: 0 };
  const { scoreAlerts } = alertsByNeed(await deps.alertRules.forAddresses([...new Set(open.map((c) => c.address))]));
  // Each payload shows the score and factors of the change that fired it (the newest per address wins).
  const latest = new Map<string, WalletRisk>(open.map((c) => [c.address, { score: c.score, factors: c.factors }]));

  const now = deps.now();
  const recorded = await retryTransaction(() =>
    deps.sql.begin(async (tx) => {
      const stillOpen = new Set(await lockUnevaluatedScoreChanges(tx, open.map((c) => c.id)));
      const changes = open.filter((c) => stillOpen.has(c.id));
      const result = await recordEvents(tx, {
        now,
        txFirings: [],
        changes,
        scoreAlerts,
        risk: (address) => latest.get(address) ?? { score: 0, factors: [] },
      });
      await markScoreChangesEvaluated(tx, [...stillOpen], now);
      return { ...result, evaluated: stillOpen.size };
    }),
  );
  await enqueueDeliveries(deps.queues, recorded.deliveries);
  return { evaluated: recorded.evaluated, events: recorded.events, notifications: recorded.deliveries.length };
}
