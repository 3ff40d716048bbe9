// An independent reference model of the alert pipeline, written from DESIGN.md sections 4 and 5
// and the README's "Alert conditions" and "Risk score" sections, not from src/domain or
// src/pipeline (importing those would make a comparison with the pipeline prove nothing).
// It is slow on purpose: every window is counted again from the full list of an address's
// transactions, every label exposure from the full history. Each rule below quotes the
// README sentence it implements.
//
// The risk engine is in reference-risk.ts, the reading of Helius items in reference-helius.ts.
//
// What the model cannot know: which counterparties an address with more than 1,000 still
// remembers (README: the set is "trimmed at random to 500 once an hour"), so its
// new_counterparty_burst; the tests leave that factor out for such an address.
import { DAY, HOUR, LABEL_FACTORS, behaviouralFactors, labelFactor, scoreOf, type Category, type Counted } from "./reference-risk.ts";

const WRAPPED_SOL = "So11111111111111111111111111111111111111112";

// README: "Well-known mints are shown by symbol with `mint` set (SOL for wrapped SOL, USDC, USDT,
// BONK, JUP, mSOL, JitoSOL, WIF, RAY, PYTH, JTO)"; the token filter: "a mint decides where a
// transaction names one: a token of another mint that calls itself `USDC` or `SOL` is not USDC
// or SOL"; "a well-known symbol stands for its mint"; "any other symbol matches in any case".
const KNOWN_MINTS: Record<string, string> = {
  sol: WRAPPED_SOL,
  usdc: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  usdt: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
  bonk: "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263",
  jup: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
  msol: "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So",
  jitosol: "J1toso1uCk3RLmjorhTtrVwY9HJ7X8V9yYac6Y7kGCPn",
  wif: "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm",
  ray: "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R",
  pyth: "HZ1JovNiVvGrGNiiYvEozEVgZ58xaU3RKwX8eACQBCt3",
  jto: "jtojtomepa8beP8AuQc6eXt5FriJwfFMwQx2v2f9mCL",
};
const looksLikeMint = (name: string) => /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(name);
/** The mint a name stands for (itself, or a well-known symbol's), or null for any other symbol. */
const mintNamed = (name: string): string | null => (looksLikeMint(name) ? name : (KNOWN_MINTS[name.toLowerCase()] ?? null));
/** The mint a movement is in, or null when only an unknown symbol names it. */
const mintOf = (tx: Pick<ModelTx, "token" | "mint">): string | null => tx.mint ?? mintNamed(tx.token);
function tokenFilterMatches(filter: string | null, tx: ModelTx): boolean {
  if (filter === null) return true;
  const wanted = mintNamed(filter);
  if (wanted !== null) return mintOf(tx) === wanted;
  return !looksLikeMint(tx.token) && tx.token.toLowerCase() === filter.toLowerCase();
}

/** One movement: a natively ingested transaction, or one leg of a Helius item (same signature, leg 0 its principal). */
export type ModelTx = {
  signature: string;
  leg?: number;
  type: "transfer" | "swap" | "stake" | "nft" | "other";
  amount: number;
  token: string;
  mint?: string | null;
  from: string;
  to: string;
  blockTime: number;
  slot: number;
  fee: number;
  status: "success" | "failed";
};

export type Condition = "large_transfer" | "suspicious_counterparty" | "unusual_activity" | "risk_score_increase";

export type ModelAlert = {
  id: string;
  /** The tracked wallet's address. */
  address: string;
  condition: Condition;
  threshold: number;
  token: string | null;
  cooldownSeconds: number;
  status: "active" | "paused";
  /** risk_score_increase: the score the rise is measured from. */
  baseline: number;
  /** Unix seconds of the last notification sent. */
  lastNotifiedAt: number | null;
  /**
   * unusual_activity: created, resumed or given another threshold, and not judged since. README:
   * its first judgment "fires if the hour is at or over the limit already", once for the burst in
   * progress; after it, only crossings fire.
   */
  armed: boolean;
};

/** An alert event; `key` is the transaction signature, or `score <address> <previous>-><score>` for a score change. */
export type ModelEvent = {
  alertId: string;
  condition: Condition;
  key: string;
  observed: number;
  suppressed: boolean;
  /** A sent event's notification: the wallet's score and factors as of the firing (README "Notifications"). */
  notified?: { score: number; factors: string[] };
};
export type ModelScoreChange = { address: string; previous: number; score: number; factors: string[] };

type AddressState = {
  trackers: number;
  score: number;
  factors: Set<string>;
  balance: number;
  /** Counted since the tracking (README: "Only tracked addresses are counted, from the first evaluation that starts after the tracking"). */
  counted: Counted[];
  /** README: "the other side of every one of its transactions, either way, failed ones included". */
  remembered: Set<string>;
  /** Per transaction: the new counterparties and the minute they count in. */
  newCounterparties: Array<{ minute: number; count: number }>;
  wokeAt: number | null;
};

const otherSide = (address: string, tx: ModelTx): string | null => (tx.from === tx.to ? null : tx.from === address ? tx.to : tx.to === address ? tx.from : null);
const chainOrder = (a: ModelTx, b: ModelTx) =>
  a.blockTime - b.blockTime || a.slot - b.slot || (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0) || (a.leg ?? 0) - (b.leg ?? 0);

export function createReferenceModel() {
  const labels = new Map<string, { category: Category; score: number }>();
  const history: ModelTx[] = [];
  /** The stored batches in the order they were counted: what a tracking replays. */
  const storedBatches: Array<{ batch: number; ordered: ModelTx[] }> = [];
  const stored = new Set<string>();
  const addresses = new Map<string, AddressState>();
  const alerts = new Map<string, ModelAlert>();
  let batches = 0;
  /** Per unusual_activity alert: the block times of the transactions its events (sent or suppressed) are on. */
  const burstsReported = new Map<string, number[]>();
  /** What the current step recorded; taken by the caller with `take()`. */
  let events: ModelEvent[] = [];
  let changes: ModelScoreChange[] = [];

  const state = (address: string): AddressState => {
    let s = addresses.get(address);
    if (!s) {
      s = { trackers: 0, score: 0, factors: new Set(), balance: 0, counted: [], remembered: new Set(), newCounterparties: [], wokeAt: null };
      addresses.set(address, s);
    }
    return s;
  };
  const isTracked = (address: string) => (addresses.get(address)?.trackers ?? 0) > 0;

  /** README: the labels of every counterparty in the stored history; failed transactions too, self-transfers have none. */
  function labelExposure(address: string): Set<string> {
    const factors = new Set<string>();
    for (const tx of history) {
      const other = otherSide(address, tx);
      const label = other === null ? undefined : labels.get(other);
      const factor = label ? labelFactor(label) : null;
      if (factor) factors.add(factor);
    }
    return factors;
  }

  /** A notification, or a suppressed event within the cooldown (README "Cooldown": at exactly cooldownSeconds it is sent). */
  function record(alert: ModelAlert, condition: Condition, key: string, observed: number, now: number, notified?: ModelEvent["notified"]) {
    const suppressed = alert.cooldownSeconds > 0 && alert.lastNotifiedAt !== null && now - alert.lastNotifiedAt < alert.cooldownSeconds;
    if (!suppressed) alert.lastNotifiedAt = now;
    events.push({ alertId: alert.id, condition, key, observed, suppressed, ...(suppressed ? {} : { notified }) });
  }

  const activeAlerts = (address: string, condition: Condition) =>
    [...alerts.values()].filter((a) => a.address === address && a.condition === condition && a.status === "active");

  /** A score change, and risk_score_increase: a rise ≥ threshold above the baseline fires and resets it (suppressed too). */
  function setScore(address: string, factors: Set<string>, now: number | null) {
    const s = state(address);
    const score = scoreOf(factors);
    const previous = s.score;
    s.factors = factors;
    s.score = score;
    if (score === previous) return;
    changes.push({ address, previous, score, factors: [...factors].sort() });
    if (now === null) return; // a tracking: no alert can exist on the address yet
    for (const alert of activeAlerts(address, "risk_score_increase")) {
      // README: "only a rise fires; a fall never does, and lowers the baseline to the new score".
      if (score > previous && score - alert.baseline >= alert.threshold) {
        // README: for risk_score_increase the notification shows the score the change reached.
        const notified = { score, factors: [...factors].sort() };
        record(alert, "risk_score_increase", `score ${address} ${previous}->${score}`, score - alert.baseline, now, notified);
        alert.baseline = score;
      } else if (score < alert.baseline) {
        alert.baseline = score;
      }
    }
  }

  /**
   * Counts a batch (`ordered`, in chain order) for the addresses `counts` picks: for the tracked
   * ones as it is evaluated, and for an address becoming tracked as its stored batches are
   * replayed (README: "Redis counters that the tracking seeds from that history").
   */
  function countBatch(ordered: readonly ModelTx[], batch: number, counts: (address: string) => boolean) {
    // Count every side `counts` picks in chain order, one event per transaction however many of its
    // legs the address is on (a self-transfer once): SOL sent summed, each counterparty counted.
    const touched: string[] = [];
    const eventOf = new Map<string, Counted>();
    /** Per address, its newest minute before the batch: what the minute buckets still held then. */
    const newestMinuteBefore = new Map<string, number>();
    for (const tx of ordered) {
      for (const address of new Set([tx.from, tx.to])) {
        if (!counts(address)) continue;
        const s = state(address);
        if (!touched.includes(address)) {
          touched.push(address);
          if (s.counted.length > 0) newestMinuteBefore.set(address, Math.floor(Math.max(...s.counted.map((c) => c.t)) / 60));
        }
        const sent = tx.from === address && tx.to !== address;
        const sol = mintOf(tx) === WRAPPED_SOL;
        const solOut = sent && tx.status === "success" && sol && ["transfer", "nft", "other"].includes(tx.type) ? tx.amount : 0;
        // README: a failed transaction counts as failed only for its sender.
        const failed = tx.status === "failed" && tx.from === address;
        const other = otherSide(address, tx);
        // README: a new counterparty is "an address it sent to (the `to` of a leg whose `from` it
        // is; a failed send counts)"; "within one transaction, an address both sent to and
        // received from counts as sent to".
        const sentTo = other !== null && tx.from === address ? other : null;
        // README: only the wallet's own sends (failed ones too) end a silence (dormant_reactivation).
        const sentByIt = tx.from === address;
        const known = eventOf.get(`${tx.signature} ${address}`);
        if (known) {
          known.sent ||= sentByIt;
          known.failed ||= failed;
          known.solOut += solOut;
          if (other !== null && !known.counterparties.includes(other)) known.counterparties.push(other);
          if (sentTo !== null && !known.sentTo.includes(sentTo)) known.sentTo.push(sentTo);
          continue;
        }
        const event: Counted = { t: tx.blockTime, sent: sentByIt, failed, solOut, counterparties: other === null ? [] : [other], sentTo: sentTo === null ? [] : [sentTo], batch };
        s.counted.push(event);
        eventOf.set(`${tx.signature} ${address}`, event);
      }
    }
    // New counterparties: sent to and not in the remembered set; each counts in the minute of the transaction that sent to it.
    const newestHour = new Map<string, number>();
    for (const address of touched) {
      const s = state(address);
      const mine = s.counted.filter((c) => c.batch === batch);
      // dormant_reactivation: a send after ≥ 90 days without a send (not the first send counted).
      // README: "only the wallet's own sends (failed ones too) end a silence"; a transfer it received
      // neither wakes it nor breaks its silence.
      for (const c of mine) {
        if (!c.sent) continue;
        const sends = s.counted.slice(0, s.counted.indexOf(c)).filter((x) => x.sent);
        const last = sends.length > 0 ? Math.max(...sends.map((x) => x.t)) : null;
        if (last !== null && c.t - last >= 90 * DAY) s.wokeAt = c.t;
      }
      // README: one "more than an hour late ... counts only against what is still kept (hour
      // buckets 171 hours back)" from the newest hour H, [H-170, H]: an hour more than 169 hours
      // behind the newest is not counted into them at all.
      const H = Math.floor(Math.max(...s.counted.map((c) => c.t)) / HOUR);
      newestHour.set(address, H);
      for (const c of mine) c.inHours = Math.floor(c.t / HOUR) >= H - 169;
      // README: the set "holds the other side of every one of its transactions, either way,
      // failed ones included"; "a transfer it received is only remembered, never counted";
      // "within a batch, chain order decides" (`mine` is in chain order); "Each new one counts at
      // the minute of the transaction that sent to it".
      for (const c of mine) {
        let fresh = 0;
        for (const other of c.sentTo) {
          if (!s.remembered.has(other)) fresh++;
          s.remembered.add(other);
        }
        for (const other of c.counterparties) s.remembered.add(other);
        if (fresh > 0) s.newCounterparties.push({ minute: Math.floor(c.t / 60), count: fresh });
      }
    }
    return { touched, eventOf, newestMinuteBefore, newestHour };
  }

  return {
    /**
     * POST /v1/wallets succeeded. README: the first caller's tracking scores the address from the
     * labels of its stored history, and "its transactions of the batches evaluated in the last 8
     * days, replayed through the counting in the order they were counted" seed its counters (the
     * tests' batches are all of the last 8 days, and far fewer than the 20,000 replayed at most),
     * and its behavioural factors are "those its seeded counters give".
     */
    track(address: string) {
      const s = state(address);
      s.trackers++;
      if (s.trackers > 1) return;
      s.counted = [];
      s.remembered = new Set();
      s.newCounterparties = [];
      s.wokeAt = null;
      for (const { batch, ordered } of storedBatches) countBatch(ordered, batch, (other) => other === address);
      setScore(address, new Set([...labelExposure(address), ...behaviouralFactors(s)]), null);
    },
    /** DELETE /v1/wallets/{id} (its alerts go with it: deleteAlert each). The last caller's leaves the address unscored and uncounted. */
    untrack(address: string) {
      state(address).trackers--;
    },
    setBalance(address: string, balance: number) {
      state(address).balance = balance;
    },
    /** POST /v1/risk/alerts: a risk_score_increase alert starts from the address's score (0 before any); an unusual_activity one armed. */
    createAlert(alert: Omit<ModelAlert, "status" | "baseline" | "lastNotifiedAt" | "armed">) {
      const baseline = addresses.get(alert.address)?.score ?? 0;
      alerts.set(alert.id, { ...alert, status: "active", baseline, lastNotifiedAt: null, armed: alert.condition === "unusual_activity" });
    },
    /** PATCH /v1/risk/alerts/{id}. README: a resumed risk_score_increase alert's baseline takes the score if it fell meanwhile. */
    patchAlert(id: string, patch: Partial<Pick<ModelAlert, "status" | "threshold" | "cooldownSeconds">>) {
      const alert = alerts.get(id)!;
      if (patch.status === "active" && alert.status !== "active" && alert.condition === "risk_score_increase") {
        alert.baseline = Math.min(alert.baseline, addresses.get(alert.address)?.score ?? 0);
      }
      // README: an unusual_activity alert resumed or given another threshold is armed again.
      const resumed = patch.status === "active" && alert.status !== "active";
      const newThreshold = patch.threshold !== undefined && patch.threshold !== alert.threshold;
      if (alert.condition === "unusual_activity" && (resumed || newThreshold)) alert.armed = true;
      Object.assign(alert, patch);
    },
    deleteAlert(id: string) {
      alerts.delete(id);
    },
    alert: (id: string) => alerts.get(id),

    /** PUT /v1/risk/labels. README: recomputes the exposure of every tracked address that ever dealt with a relabelled address. */
    putLabels(list: Array<{ address: string; category: Category; score: number }>, now: number) {
      const changed = new Set<string>();
      for (const label of list) {
        const old = labels.get(label.address);
        if (old?.category !== label.category || old.score !== label.score) changed.add(label.address);
        labels.set(label.address, { category: label.category, score: label.score });
      }
      const affected = new Set<string>();
      for (const tx of history) {
        if (tx.from === tx.to) continue;
        if (changed.has(tx.to) && isTracked(tx.from)) affected.add(tx.from);
        if (changed.has(tx.from) && isTracked(tx.to)) affected.add(tx.to);
      }
      for (const address of affected) {
        const s = state(address);
        const kept = [...s.factors].filter((f) => !LABEL_FACTORS.has(f));
        setScore(address, new Set([...kept, ...labelExposure(address)]), now);
      }
    },

    /** POST /v1/ingest/transactions (or a Helius delivery's legs), evaluated at `now` (Unix seconds); returns the rows stored. */
    ingest(txs: readonly ModelTx[], now: number): ModelTx[] {
      // Idempotent by signature: a repeated item (all its legs) is never evaluated twice.
      const repeated = new Set(txs.filter((tx) => stored.has(tx.signature)).map((tx) => tx.signature));
      const fresh = txs.filter((tx) => !repeated.has(tx.signature));
      for (const tx of fresh) stored.add(tx.signature);
      if (fresh.length === 0) return [];
      const batch = ++batches;
      const ordered = [...fresh].sort(chainOrder);
      // Risk as it was before the batch (README: "the counterparty's score is the one it had before the batch").
      const scoreBefore = new Map([...addresses].filter(([, s]) => s.trackers > 0).map(([a, s]) => [a, s.score]));
      history.push(...ordered);
      storedBatches.push({ batch, ordered });

      const { touched, eventOf, newestMinuteBefore, newestHour } = countBatch(ordered, batch, isTracked);

      // The transaction conditions, in chain order. README: an alert fires at most once per
      // transaction; of several legs that reach its threshold, the one with the highest observed
      // value is the event (the first in leg order among equals). Recorded once all are judged.
      type Crossing = { tx: ModelTx; observed: number; sent: boolean };
      const fired = new Map<string, { alert: ModelAlert; condition: Condition; tx: ModelTx; observed: number; byToken?: Map<string, Crossing> }>();
      const firedAlerts = new Set<string>();
      const firstEvent = events.length;
      const fire = (alert: ModelAlert, condition: Condition, tx: ModelTx, observed: number, sent = false) => {
        const key = `${alert.id} ${tx.signature}`;
        const held = fired.get(key);
        if (condition === "large_transfer") {
          // README: a large_transfer compares amounts of one token only (SOL and wrapped SOL are
          // one): each token's largest crossing leg (what the wallet sent among equals) is named,
          // and the event's observed is the first named one's, what the wallet sent first.
          const byToken = held?.byToken ?? new Map<string, Crossing>();
          const token = mintOf(tx) ?? `symbol ${tx.token.toLowerCase()}`;
          const best = byToken.get(token);
          if (!best || observed > best.observed || (observed === best.observed && sent && !best.sent)) byToken.set(token, { tx, observed, sent });
          const first = [...byToken.values()].find((c) => c.sent) ?? [...byToken.values()][0]!;
          fired.set(key, { alert, condition, tx: first.tx, observed: first.observed, byToken });
        } else if (held === undefined || observed > held.observed) fired.set(key, { alert, condition, tx, observed });
        firedAlerts.add(alert.id);
      };
      // README: large_transfer judges "what the wallet moved in the transaction: its legs of one
      // token in one direction count as their total" — in billionths, exactly.
      const billionths = (amount: number) => BigInt(Math.round(amount * 1e9));
      // "Legs of other tokens are not added, nor native SOL to wrapped SOL": as each leg names its token.
      const named = (leg: ModelTx) => leg.mint ?? (mintOf(leg) === WRAPPED_SOL ? "native SOL" : mintOf(leg) ?? `symbol ${leg.token.toLowerCase()}`);
      const sameToken = (a: ModelTx, b: ModelTx) => named(a) === named(b);
      const movedTotal = (address: string, tx: ModelTx) => {
        const sent = tx.from === address;
        const legs = ordered.filter(
          (leg) => leg.signature === tx.signature && leg.from !== leg.to && (leg.from === address) === sent && (leg.to === address) === !sent && sameToken(leg, tx),
        );
        return legs.reduce((sum, leg) => sum + billionths(leg.amount), 0n);
      };
      /**
       * unusual_activity's `observed` (README): "the multiple reached, cut down (never rounded up)
       * to the threshold's decimal places, at least 2".
       */
      const multipleReached = (alert: ModelAlert, count: number, previous7Days: number) => {
        const places = Math.max(2, alert.threshold.toFixed(9).replace(/0+$/, "").split(".")[1]?.length ?? 0);
        const cut = (BigInt(count) * 168n * 10n ** BigInt(places)) / BigInt(Math.max(168, previous7Days));
        return Number(cut) / 10 ** places;
      };
      /** unusual_activity's comparison, in whole numbers: count × 168 against threshold × max(168, 7-day count), the threshold in billionths. */
      const reachesLimit = (alert: ModelAlert, count: number, previous7Days: number) =>
        BigInt(count) * 168n * 1_000_000_000n >= BigInt(Math.round(alert.threshold * 1e9)) * BigInt(Math.max(168, previous7Days));
      // README: an armed alert's first judgment (its first batch) fires, where no crossing does,
      // on the first of the batch's judgments that finds the hour at or over the limit.
      // The minute whose trailing hour it judged: the transaction's own, or the wallet's newest.
      const armedFirst = new Map<string, { alert: ModelAlert; tx: ModelTx; observed: number; minute: number }>();
      // README: the limit moves at each hour boundary; "below the limit" before a transaction is
      // also "the verdict at the wallet's transaction before it against the limit of that one's
      // hour". Before the batch, that transaction is the newest one, at its newest minute: its
      // trailing hour then (what the minutes still held) and the 7 days before its own hour.
      const minuteOf = (c: Counted) => Math.floor(c.t / 60);
      const verdictBeforeBatch = (address: string): { count: number; previous7Days: number } | undefined => {
        const before = newestMinuteBefore.get(address);
        if (before === undefined) return undefined;
        const earlier = state(address).counted.filter((c) => c.batch !== batch);
        const Hb = Math.floor(before / 60);
        return {
          count: earlier.filter((c) => minuteOf(c) >= before - 59 && minuteOf(c) <= before).length,
          previous7Days: earlier.filter((c) => c.inHours === true && Math.floor(c.t / HOUR) >= Hb - 169 && Math.floor(c.t / HOUR) <= Hb - 2).length,
        };
      };
      /**
       * Per address, the verdict at its transaction of this batch judged last (its trailing hour,
       * baseline and minute: a transaction's legs share it), and the one at the transaction before.
       */
      type Verdict = { event: Counted; count: number; previous7Days: number; minute: number };
      const latestVerdict = new Map<string, Verdict>();
      const verdictBeforeLatest = new Map<string, Verdict | undefined>();
      for (const tx of ordered) {
        for (const address of new Set([tx.from, tx.to])) {
          if (!isTracked(address)) continue;
          const s = state(address);
          const other = otherSide(address, tx);
          for (const alert of activeAlerts(address, "large_transfer")) {
            const tokenMatches = tokenFilterMatches(alert.token, tx);
            // A failed transaction does not fire, nor does a self-transfer.
            if (tx.status === "success" && other !== null && tokenMatches) {
              const total = movedTotal(address, tx);
              if (total >= billionths(alert.threshold)) fire(alert, "large_transfer", tx, Number(total) / 1e9, tx.from === address);
            }
          }
          if (other !== null) {
            const risks = [labels.get(other)?.score, scoreBefore.get(other)].filter((r): r is number => r !== undefined);
            const risk = risks.length > 0 ? Math.max(...risks) : null;
            for (const alert of activeAlerts(address, "suspicious_counterparty")) {
              if (risk !== null && risk >= alert.threshold) fire(alert, "suspicious_counterparty", tx, risk);
            }
          }
          const event = eventOf.get(`${tx.signature} ${address}`)!;
          const position = s.counted.indexOf(event);
          const minute = Math.floor(event.t / 60);
          // What is still kept of earlier batches: minute buckets two hours back from the newest
          // minute before this batch, [M−119, M]; hour buckets back to the newest hour − 170.
          const before = newestMinuteBefore.get(address);
          const keptMinute = (c: Counted) => c.batch === batch || before === undefined || Math.floor(c.t / 60) >= before - 119;
          const keptHour = (c: Counted) => c.inHours === true && Math.floor(c.t / HOUR) >= newestHour.get(address)! - 170;
          // Its trailing hour: what was counted before it (earlier batches, earlier in this one) in minutes [m−59, m], and itself.
          const after = s.counted
            .slice(0, position + 1)
            .filter((c) => Math.floor(c.t / 60) >= minute - 59 && Math.floor(c.t / 60) <= minute && keptMinute(c)).length;
          // Its baseline: the 7 days before the hour preceding its own hour, [h−169, h−2].
          const H = Math.floor(event.t / HOUR);
          const previous7Days = s.counted.filter((c) => Math.floor(c.t / HOUR) >= H - 169 && Math.floor(c.t / HOUR) <= H - 2 && keptHour(c)).length;
          // README: a late transaction (not newer than the wallet's newest minute before its batch,
          // and inside the trailing hour there) "fires only if that hour was still below the limit"
          // (the limit of that minute's own hour, which it was judged by).
          const late = before !== undefined && minute <= before && minute >= before - 59;
          const atNewestBefore = verdictBeforeBatch(address);
          // The verdict before this transaction's: at the batch's transaction of the wallet before
          // it, or at the newest minute before the batch, whichever is later; none for one older
          // than that newest minute (README: "A late transaction is judged against its own hour's limit alone").
          if (latestVerdict.get(address)?.event !== event) {
            verdictBeforeLatest.set(address, latestVerdict.get(address));
            latestVerdict.set(address, { event, count: after, previous7Days, minute });
          }
          const previousInBatch = verdictBeforeLatest.get(address);
          const verdictBefore =
            before !== undefined && minute < before
              ? undefined
              : previousInBatch !== undefined && (before === undefined || previousInBatch.minute >= before)
                ? previousInBatch
                : atNewestBefore;
          for (const alert of activeAlerts(address, "unusual_activity")) {
            // Edge-triggered, in whole numbers: count × 168 against threshold × max(168, 7-day count),
            // the threshold in billionths (as stored, 9 decimals) so that the equality edge is exact.
            const reaches = (count: number) => reachesLimit(alert, count, previous7Days);
            if (alert.armed && alert.threshold > 0 && reaches(after) && !armedFirst.has(alert.id)) {
              armedFirst.set(alert.id, { alert, tx, observed: multipleReached(alert, after, previous7Days), minute });
            }
            if (late && reachesLimit(alert, atNewestBefore!.count, atNewestBefore!.previous7Days)) continue;
            const belowBefore = !reaches(after - 1) || (verdictBefore !== undefined && !reachesLimit(alert, verdictBefore.count, verdictBefore.previous7Days));
            if (alert.threshold > 0 && belowBefore && reaches(after)) {
              fire(alert, "unusual_activity", tx, multipleReached(alert, after, previous7Days));
            }
          }
        }
      }
      // unusual_activity, judged once more at the wallet's newest minute M (README): the trailing
      // hour [M−59, M] at its newest minute before the batch, and at its newest minute after it,
      // against the 7 days before the newest hour; crossing there fires on the wallet's newest
      // transaction of the batch, for an alert the batch did not fire already.
      for (const address of touched) {
        const alertsOf = activeAlerts(address, "unusual_activity").filter((a) => a.threshold > 0 && !firedAlerts.has(a.id));
        if (alertsOf.length === 0) continue;
        const s = state(address);
        const atNewestBefore = verdictBeforeBatch(address);
        const countBefore = atNewestBefore?.count ?? 0;
        const M = Math.floor(Math.max(...s.counted.map((c) => c.t)) / 60);
        const countAfter = s.counted.filter((c) => minuteOf(c) >= M - 59 && minuteOf(c) <= M).length;
        const H = newestHour.get(address)!;
        const previous7Days = s.counted.filter((c) => c.inHours === true && Math.floor(c.t / HOUR) >= H - 169 && Math.floor(c.t / HOUR) <= H - 2).length;
        const newest = ordered.findLast((tx) => tx.from === address || tx.to === address)!;
        for (const alert of alertsOf) {
          const belowBefore =
            !reachesLimit(alert, countBefore, previous7Days) || (atNewestBefore !== undefined && !reachesLimit(alert, countBefore, atNewestBefore.previous7Days));
          if (belowBefore && reachesLimit(alert, countAfter, previous7Days)) {
            fire(alert, "unusual_activity", newest, multipleReached(alert, countAfter, previous7Days));
          } else if (alert.armed && reachesLimit(alert, countAfter, previous7Days) && !armedFirst.has(alert.id)) {
            armedFirst.set(alert.id, { alert, tx: newest, observed: multipleReached(alert, countAfter, previous7Days), minute: M });
          }
        }
      }
      // The armed alerts judged in this batch: the burst in progress fires once, unless a
      // crossing fired already, or the alert has an event (README) "on a transaction dated within
      // an hour of the minute judged": that burst it reported. Either way their arming is spent.
      const reportedNear = (alertId: string, minute: number) =>
        (burstsReported.get(alertId) ?? []).some((t) => Math.abs(Math.floor(t / 60) - minute) <= 59);
      for (const address of touched) {
        for (const alert of activeAlerts(address, "unusual_activity").filter((a) => a.armed)) {
          const first = armedFirst.get(alert.id);
          if (first && !firedAlerts.has(alert.id) && !reportedNear(alert.id, first.minute)) fire(alert, "unusual_activity", first.tx, first.observed);
          alert.armed = false;
        }
      }

      for (const { alert, condition, tx, observed } of fired.values()) {
        record(alert, condition, tx.signature, observed, now);
        if (condition === "unusual_activity") burstsReported.set(alert.id, [...(burstsReported.get(alert.id) ?? []), tx.blockTime]);
      }

      // Every tracked address the batch touched is rescored: exposure is sticky, behaviour from the counters.
      for (const address of touched) {
        const s = state(address);
        const exposure = [...s.factors].filter((f) => LABEL_FACTORS.has(f));
        for (const tx of ordered) {
          const other = otherSide(address, tx);
          const label = other === null ? undefined : labels.get(other);
          const factor = label ? labelFactor(label) : null;
          if (factor) exposure.push(factor);
        }
        setScore(address, new Set([...exposure, ...behaviouralFactors(s)]), now);
      }
      // README: for the other conditions the notification shows the score once the transaction's batch is scored.
      for (const event of events.slice(firstEvent)) {
        if (event.suppressed || event.condition === "risk_score_increase") continue;
        const s = state(alerts.get(event.alertId)!.address);
        event.notified = { score: s.score, factors: [...s.factors].sort() };
      }
      return fresh;
    },

    /** What the step recorded since the last take. */
    take(): { events: ModelEvent[]; changes: ModelScoreChange[] } {
      const out = { events, changes };
      events = [];
      changes = [];
      return out;
    },
    scores(): Map<string, { score: number; factors: string[] }> {
      return new Map([...addresses].filter(([, s]) => s.trackers > 0).map(([a, s]) => [a, { score: s.score, factors: [...s.factors].sort() }]));
    },
  };
}

export type ReferenceModel = ReturnType<typeof createReferenceModel>;
