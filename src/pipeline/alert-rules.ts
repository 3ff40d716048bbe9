// The active alerts, kept in the worker's memory: every batch needs those of a few thousand
// addresses, and joining them out of Postgres each time cost more than any other read of the
// evaluation. Each use reads one counter (alert_rules_version, moved forward by triggers in
// the same transaction as any change that evaluation reads) and reloads everything when it
// moved, so a new, paused or edited alert counts from the first batch evaluated after its
// commit. Alerts about to fire are still locked and re-read at commit (record-events.ts):
// the status, cooldown and baseline that decide a firing never come from here.
import type { Sql } from "../db/client.ts";
import { alertRulesVersion, loadAllActiveAlerts, type ActiveAlertRow } from "../db/queries/pipeline.ts";
import { groupByAddress } from "./transaction-firings.ts";

export type AlertRules = {
  /** The active alerts (all callers') of those of these addresses that have any, current as of this call. */
  forAddresses: (addresses: Iterable<string>) => Promise<Map<string, readonly ActiveAlertRow[]>>;
};

export function createAlertRules(sql: Sql): AlertRules {
  let cached: { version: number; byAddress: Map<string, ActiveAlertRow[]> } | undefined;
  let loading: Promise<NonNullable<typeof cached>> | undefined;

  const load = () =>
    (loading ??= loadAllActiveAlerts(sql)
      .then(({ version, alerts }) => (cached = { version, byAddress: groupByAddress(alerts) }))
      .finally(() => (loading = undefined)));

  return {
    forAddresses: async (addresses) => {
      const version = await alertRulesVersion(sql);
      // A load already under way may predate this version; it is then followed by another.
      let rules = cached?.version === version ? cached : await load();
      if (rules.version < version) rules = await load();
      const found = new Map<string, readonly ActiveAlertRow[]>();
      for (const address of addresses) {
        const list = rules.byAddress.get(address);
        if (list) found.set(address, list);
      }
      return found;
    },
  };
}
