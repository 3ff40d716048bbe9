// What the windowed large_transfer alerts of a group sum: the stored sends of each address that
// has such an alert and sends in the group, read once per group (loadStoredSends), whatever
// batch or evaluation they came in, so that the sum is the same whichever worker evaluates and
// after a restart. A group with no windowed alert on its senders reads nothing. Sends newer
// than the group's are read too (none, in block-time order): a late send is judged again at
// the newest judged send within its reach (domain/conditions/large-transfer-window.ts).
import type { SendRange } from "../db/queries/pipeline.ts";
import {
  ignoresOwnWallets,
  isOwnLeg,
  sendWindow,
  trailingSends,
  type AlertRule,
  type OwnWallets,
  type SendWindow,
  type StoredSend,
  type TrailingSends,
} from "../domain/conditions/index.ts";
import type { Transaction } from "../domain/types.ts";

/** Looks up the trailing window of a windowed rule at one of its wallet's sends of the group. */
export type TrailingSendsLookup = (rule: AlertRule, tx: Transaction) => TrailingSends | null;

/**
 * Per address with a windowed large_transfer alert (`longest`: its longest window, alertsByNeed)
 * that sent in the group: the block times its windows can reach, from its earliest send of the
 * group less its longest window, to its latest plus that window (the sends a late one is judged at).
 */
export function sendRanges(txs: readonly Transaction[], longest: ReadonlyMap<string, number>): SendRange[] {
  if (longest.size === 0) return [];
  const spans = new Map<string, { earliest: number; latest: number }>();
  for (const tx of txs) {
    if (tx.from === tx.to || tx.status !== "success" || !longest.has(tx.from)) continue;
    const span = spans.get(tx.from);
    if (!span) spans.set(tx.from, { earliest: tx.blockTime, latest: tx.blockTime });
    else {
      span.earliest = Math.min(span.earliest, tx.blockTime);
      span.latest = Math.max(span.latest, tx.blockTime);
    }
  }
  return [...spans].map(([address, { earliest, latest }]) => ({ address, after: earliest - longest.get(address)!, until: latest + longest.get(address)! }));
}

/**
 * The lookup over the stored sends, each (address, token) window built once, when first asked.
 * `evaluated`: the signatures of the group (absent: every stored send is the group's).
 * `ownWallets`: the wallets of the owners of alerts with ignoreOwnWallets, whose windows leave
 * out the sends to them (one window per such owner besides the shared one).
 */
export function trailingSendsLookup(
  stored: ReadonlyMap<string, readonly StoredSend[]>,
  evaluated?: ReadonlySet<string>,
  ownWallets?: OwnWallets,
): TrailingSendsLookup {
  const windows = new Map<string, SendWindow>();
  return (rule, tx) => {
    if (rule.windowSeconds == null || rule.token === null) return null;
    const sends = stored.get(rule.address);
    if (!sends) return null;
    const ignoringOwn = ownWallets !== undefined && ignoresOwnWallets(rule);
    const key = ignoringOwn ? `${rule.address} ${rule.token} ${rule.owner}` : `${rule.address} ${rule.token}`;
    let window = windows.get(key);
    if (!window) {
      const counts = ignoringOwn ? (send: Transaction) => !isOwnLeg(rule, send, ownWallets) : undefined;
      window = sendWindow(rule.address, rule.token, sends, evaluated, counts);
      windows.set(key, window);
    }
    return trailingSends(window, tx.signature, rule.windowSeconds);
  };
}
