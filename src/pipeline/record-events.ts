// Turns firings into alert_events and notifications inside the evaluation's transaction.
// The alerts about to fire are locked and re-read, so their status (a paused alert never
// fires), cooldown and risk baseline are those of the moment of commit, not of the moment
// the batch was loaded. An event already recorded for (alert, dedupe key) is skipped by
// the unique index, so a replay never fires twice and never notifies twice. Under the same
// locks: a risk_score_increase alert judges only the score changes made after it was created
// or last resumed (judgeScoreChange), and an armed unusual_activity alert's arming is spent
// (its firing stands only if the alert has not reported that burst already: reported-bursts.ts).
// The first suppressed event of a cooldown window also makes that window's digest.
import type { TransactionSql } from "postgres";
import type { ActiveAlertRow } from "../db/queries/pipeline.ts";
import type { JudgedSettings } from "../db/schema.ts";
import {
  disarmAlerts,
  insertEvents,
  insertNotifications,
  lockAlerts,
  updateFiredAlerts,
  type AlertFired,
  type LockedAlert,
  type NewEvent,
  type NewNotification,
} from "../db/queries/pipeline-writes.ts";
import { alertsThatReportedBurst } from "../db/queries/reported-bursts.ts";
import { isSuppressedByCooldown, judgeScoreChange, oneEventPerTransaction, type Firing, type ScoreAlertState, type ScoreChange } from "../domain/conditions/index.ts";
import type { Transaction } from "../domain/types.ts";
import { plainDecimal } from "../domain/decimal.ts";
import { newId } from "../ids.ts";
import type { DeliveryItem } from "../queue/deliveries.ts";
import { insertCooldownDigests } from "./cooldown-digest.ts";
import { destinationOf, triggeredPayload, type WalletRisk } from "./notification.ts";
import type { TxFiring } from "./transaction-firings.ts";

export type EventsInput = {
  now: Date;
  txFirings: readonly TxFiring[];
  /** Score changes to evaluate against risk_score_increase alerts, oldest first. */
  changes: readonly ScoreChange[];
  /** Active risk_score_increase alerts by address (as loaded; re-checked under lock). */
  scoreAlerts: ReadonlyMap<string, readonly ActiveAlertRow[]>;
  /** An address's score and factors as of this evaluation (for payloads that carry none of their own). */
  risk: (address: string) => WalletRisk;
  /** The armed unusual_activity alerts this evaluation judged: their arming is spent (evaluateSteps). */
  armedJudged?: ReadonlySet<string>;
};

type Candidate = {
  alert: ActiveAlertRow;
  firing: Firing;
  transaction?: Transaction;
  baselineAfter?: number;
  /** The wallet's score as of the firing (a change's own score), for the notification. */
  risk?: WalletRisk;
};

/** The deliveries carry their alerts' owners, so that one caller's burst waits behind others' first notifications. */
export type RecordedEvents = { events: number; deliveries: Array<DeliveryItem & { owner: string }> };

export async function recordEvents(tx: TransactionSql, input: EventsInput): Promise<RecordedEvents> {
  const scoreAlertIds = input.changes.flatMap((c) => (input.scoreAlerts.get(c.address) ?? []).map((a) => a.alertId));
  const armedJudged = [...(input.armedJudged ?? [])];
  const alertIds = [...new Set([...input.txFirings.map((f) => f.alert.alertId), ...scoreAlertIds, ...armedJudged])];
  if (alertIds.length === 0) return { events: 0, deliveries: [] };
  const locked = new Map((await lockAlerts(tx, alertIds)).map((row) => [row.id, row]));
  const isActive = (alertId: string) => locked.get(alertId)?.status === "active";

  const firings = strongestOfEachEvent(input.txFirings).filter((f) => isActive(f.alert.alertId));
  // An armed judgment's firing stands only while the alert is still armed (an evaluation that
  // committed meanwhile judged it first: this one read the mark before that commit), and only for
  // a burst the alert has not reported: resumed, or given another threshold, in the middle of a
  // burst it fired on, it paged that burst again.
  const armedFirings = firings.filter((f) => f.armed !== undefined && locked.get(f.alert.alertId)!.activityArmed);
  const reported = await alertsThatReportedBurst(
    tx,
    armedFirings.map((f) => ({ alertId: f.alert.alertId, minute: Math.floor(f.armed!.hourTo / 60) })),
  );
  const candidates: Candidate[] = firings
    .filter((f) => f.armed === undefined || (locked.get(f.alert.alertId)!.activityArmed && !reported.has(f.alert.alertId)))
    .map((f) => ({ alert: f.alert, firing: f.firing, transaction: f.transaction, risk: f.risk }));
  // Each alert's baseline as the changes move it, oldest change first (DESIGN.md section 4;
  // the reasons are judgeScoreChange's).
  const scoreStates = new Map<string, ScoreAlertState>();
  const baselines = new Map<string, number | null>();
  for (const change of input.changes) {
    for (const alert of input.scoreAlerts.get(change.address) ?? []) {
      if (!isActive(alert.alertId)) continue;
      const held = locked.get(alert.alertId)!;
      const state = scoreStates.get(alert.alertId) ?? { baselineScore: held.baselineScore, baselineChangeId: held.baselineChangeId };
      const judged = judgeScoreChange(alert, state, change);
      if (judged === null) continue; // made before the alert was created or last resumed
      if (judged.firing) {
        candidates.push({ alert, firing: judged.firing, baselineAfter: change.score, risk: { score: change.score, factors: change.factors } });
      }
      if (judged.firing || judged.baselineScore !== state.baselineScore) baselines.set(alert.alertId, judged.baselineScore);
      scoreStates.set(alert.alertId, { ...state, baselineScore: judged.baselineScore });
    }
  }
  await disarmAlerts(tx, armedJudged.filter((alertId) => locked.get(alertId)?.activityArmed === true));

  // The score the notification carries, and what a suppressed event would have carried: stored with each event.
  const riskOf = (candidate: Candidate): WalletRisk => candidate.risk ?? input.risk(candidate.alert.address);
  const events = withCooldown(candidates, locked, input.now, riskOf);
  const inserted = await insertEvents(tx, events.map((e) => e.row), input.now);
  const notifications: NewNotification[] = [];
  const fired = new Map<string, AlertFired>();
  for (const [alertId, baseline] of baselines) fired.set(alertId, { id: alertId, lastNotifiedAt: null, baselineScore: baseline });
  for (const { row, candidate } of events) {
    if (!inserted.has(row.id) || row.suppressed) continue;
    const destination = destinationOf(candidate.alert);
    if (destination === null) continue; // nowhere to send it: recorded, and the cooldown does not start
    fired.set(row.alertId, { ...(fired.get(row.alertId) ?? { id: row.alertId, baselineScore: null }), lastNotifiedAt: input.now });
    const risk = riskOf(candidate);
    const id = newId("ntf", input.now.getTime());
    const payload = triggeredPayload(candidate.alert, candidate.firing, risk, candidate.transaction, input.now, { notificationId: id, eventId: row.id });
    notifications.push({
      id,
      alertId: row.alertId,
      eventId: row.id,
      channel: candidate.alert.channel,
      destination,
      payload: JSON.stringify(payload),
    });
  }
  await insertNotifications(tx, notifications, input.now);
  await updateFiredAlerts(tx, [...fired.values()]);
  // The first suppressed event of a cooldown window makes its digest, due when the window ends
  // (cooldown-digest.ts); its delivery job, enqueued with the others, waits in BullMQ's delayed set until then (notBefore).
  const digests = await insertCooldownDigests(
    tx,
    events.flatMap(({ row, candidate, cooldownStart }) => {
      if (!inserted.has(row.id) || cooldownStart === null) return [];
      const alert = locked.get(row.alertId)!;
      const risk = riskOf(candidate);
      return [{ alert: candidate.alert, owner: alert.owner, windowStart: cooldownStart, cooldownSeconds: alert.cooldownSeconds, risk }];
    }),
    input.now,
  );
  const deliveries = notifications.map((n) => ({ notificationId: n.id, channel: n.channel, owner: locked.get(n.alertId)!.owner }));
  return { events: inserted.size, deliveries: [...deliveries, ...digests] };
}

/**
 * Several legs of one transaction can fire one alert under one dedupe key: one event for them,
 * in firing order, as oneEventPerTransaction makes it (the riskiest counterparty's leg; for a
 * large_transfer each token's largest leg named, the outgoing one the event's). The first leg
 * alone, a payment of 1,000 USDC to an exchange (risk 80) told the alert's owner nothing of the
 * 50 SOL its next leg sent to a sanctioned address.
 */
function strongestOfEachEvent(firings: readonly TxFiring[]): TxFiring[] {
  return oneEventPerTransaction(firings);
}

/**
 * Events in firing order; within an alert's cooldown after a notification, an event is
 * suppressed. `cooldownStart`: a suppressed event's window, the notification that started it.
 * Each keeps what it was judged by: the threshold and token this evaluation judged with (as
 * loaded, which a PATCH racing it may have changed since), the cooldown as locked (what decided
 * `suppressed`), and the wallet's score with it.
 */
function withCooldown(
  candidates: readonly Candidate[],
  locked: ReadonlyMap<string, LockedAlert>,
  now: Date,
  riskOf: (candidate: Candidate) => WalletRisk,
): Array<{ row: NewEvent; candidate: Candidate; cooldownStart: Date | null }> {
  const lastNotified = new Map<string, Date | null>();
  return candidates.map((candidate) => {
    const alert = locked.get(candidate.alert.alertId)!;
    const last = lastNotified.has(alert.id) ? lastNotified.get(alert.id)! : alert.lastNotifiedAt;
    const suppressed = isSuppressedByCooldown(last, alert.cooldownSeconds, now);
    const risk = riskOf(candidate);
    if (!suppressed) lastNotified.set(alert.id, now);
    const row: NewEvent = {
      id: newId("evt", now.getTime()),
      alertId: alert.id,
      dedupeKey: candidate.firing.dedupeKey,
      condition: candidate.alert.condition,
      observed: candidate.firing.observed,
      suppressed,
      transactionSignature: candidate.firing.transactionSignature ?? null,
      reason: candidate.firing.reason,
      judged: judgedSettings(candidate.alert, alert.cooldownSeconds),
      riskScore: risk.score,
      riskFactors: risk.factors,
    };
    return { row, candidate, cooldownStart: suppressed ? last : null };
  });
}

/** The settings an event was judged by; the threshold as the decimal it is (never in exponent form). */
function judgedSettings(alert: ActiveAlertRow, cooldownSeconds: number): JudgedSettings {
  return { threshold: plainDecimal(String(alert.threshold)), token: alert.token, cooldownSeconds };
}
