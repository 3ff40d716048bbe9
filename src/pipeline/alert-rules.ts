// The active alerts and the tracked addresses, kept in the worker's memory: every batch needs
// those of a few thousand addresses, and joining them out of Postgres each time cost more than
// any other read of the evaluation. Each use reads one counter (alert_rules_version, moved
// forward by triggers in the same transaction as any change that evaluation reads, tracking
// and untracking included) and uses the memory only when it was loaded at that very version;
// otherwise that batch's alerts are queried directly, as before the cache, and a reload
// starts in the background. So a new, paused or edited alert counts from the first batch
// evaluated after its commit, and a steady stream of alert changes (a caller importing
// thousands, one by one) costs the direct query per batch plus a full reload at most every
// few seconds (backing off to 30 s), never a reload per batch. The alerts about to fire are
// still locked and re-read at commit (record-events.ts): the status, cooldown and baseline
// that decide a firing never come from here.
import type { Sql } from "../db/client.ts";
import { alertRulesVersion, loadActiveAlerts, loadAllActiveAlerts, loadTrackedAmong, type ActiveAlertRow } from "../db/queries/pipeline.ts";
import { ignoresOwnWallets } from "../domain/conditions/index.ts";
import type { Logger } from "../logger.ts";
import { groupByAddress } from "./transaction-firings.ts";

/** What evaluation needs to know of a batch's addresses, current as of the call. */
export type AddressRules = {
  /** The active alerts (all callers') of those of the addresses that have any. */
  alerts: Map<string, readonly ActiveAlertRow[]>;
  /** Those of the addresses that some caller tracks (with or without alerts): every address of `alerts` among them. */
  tracked: Set<string>;
};

export type AlertRules = {
  lookup: (addresses: readonly string[]) => Promise<AddressRules>;
  /** The alerts part of lookup. */
  forAddresses: (addresses: readonly string[]) => Promise<Map<string, readonly ActiveAlertRow[]>>;
  /** Batches served from memory, batches queried directly, and full loads started. */
  stats: () => { fromMemory: number; queried: number; loads: number };
};

const FIRST_RETRY_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

export function createAlertRules(sql: Sql, logger: Pick<Logger, "warn">): AlertRules {
  let cached: { version: number; byAddress: Map<string, ActiveAlertRow[]>; tracked: Set<string> } | undefined;
  let loading = false;
  let nextLoadAt = 0;
  let backoffMs = 0;
  const stats = { fromMemory: 0, queried: 0, loads: 0 };

  const reloadInBackground = () => {
    const now = Date.now();
    if (loading || now < nextLoadAt) return;
    loading = true;
    stats.loads++;
    // Each load that the next change overtakes makes the next one wait longer.
    backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(FIRST_RETRY_MS, backoffMs * 2));
    nextLoadAt = now + backoffMs;
    loadAllActiveAlerts(sql)
      .then(({ version, alerts, tracked }) => {
        cached = { version, byAddress: groupByAddress(alerts), tracked: new Set(tracked) };
      })
      .catch((error: unknown) => logger.warn({ err: error }, "alert rules: reload failed; batches query their alerts meanwhile"))
      .finally(() => {
        loading = false;
      });
  };

  const lookup = async (addresses: readonly string[]): Promise<AddressRules> => {
    const version = await alertRulesVersion(sql);
    if (cached?.version === version) {
      stats.fromMemory++;
      backoffMs = 0;
      nextLoadAt = 0;
      const alerts = new Map<string, readonly ActiveAlertRow[]>();
      const tracked = new Set<string>();
      for (const address of addresses) {
        const list = cached.byAddress.get(address);
        if (list) alerts.set(address, list);
        if (cached.tracked.has(address)) tracked.add(address);
      }
      return { alerts, tracked };
    }
    reloadInBackground();
    stats.queried++;
    const [alerts, tracked] = await Promise.all([loadActiveAlerts(sql, addresses), loadTrackedAmong(sql, addresses)]);
    // Two reads, two snapshots: an address with alerts counts as tracked whatever the other saw.
    return { alerts: groupByAddress(alerts), tracked: new Set([...tracked, ...alerts.map((alert) => alert.address)]) };
  };

  return {
    lookup,
    forAddresses: async (addresses) => (await lookup(addresses)).alerts,
    stats: () => ({ ...stats }),
  };
}

/**
 * In one pass over a batch's alerts: the addresses with an unusual_activity alert (they need
 * per-event window counts), the risk_score_increase alerts by address, the longest window
 * of the addresses with a windowed large_transfer alert (their stored sends are read: send-windows.ts),
 * and the owners of large_transfer alerts with ignoreOwnWallets (their wallets are read).
 */
export function alertsByNeed(alerts: ReadonlyMap<string, readonly ActiveAlertRow[]>): {
  needWindows: Set<string>;
  scoreAlerts: Map<string, ActiveAlertRow[]>;
  longestSendWindow: Map<string, number>;
  ownWalletOwners: Set<string>;
} {
  const needWindows = new Set<string>();
  const scoreAlerts = new Map<string, ActiveAlertRow[]>();
  const longestSendWindow = new Map<string, number>();
  const ownWalletOwners = new Set<string>();
  for (const [address, list] of alerts) {
    for (const alert of list) {
      if (alert.condition === "unusual_activity") needWindows.add(address);
      else if (alert.condition === "large_transfer") {
        if (alert.windowSeconds != null) longestSendWindow.set(address, Math.max(longestSendWindow.get(address) ?? 0, alert.windowSeconds));
        if (ignoresOwnWallets(alert)) ownWalletOwners.add(alert.owner);
      } else if (alert.condition === "risk_score_increase") {
        const found = scoreAlerts.get(address);
        if (found) found.push(alert);
        else scoreAlerts.set(address, [alert]);
      }
    }
  }
  return { needWindows, scoreAlerts, longestSendWindow, ownWalletOwners };
}
