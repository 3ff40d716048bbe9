// The rules of an alert's body that span fields, after the JSON schema has checked each
// field alone: threshold per condition, destination per notification method, and where a
// webhook URL points. All problems of this round are reported together, as the schema's
// are in its own round before (a body that fails the schema never reaches these rules).
// Besides, what the schema cannot see: a threshold literal JSON.parse rounded (assertExactThreshold).
import type { AlertChanges, AlertRow } from "../../db/queries/alerts.ts";
import { effectiveThreshold, tokenFilter } from "../../domain/alert-settings.ts";
import { resolveRecipient, type ClaimedContacts } from "../../domain/recipients.ts";
import type { SmsNumberRules } from "../../domain/sms-number.ts";
import type { Condition, NotificationMethod } from "../../domain/types.ts";
import { INEXACT_DIGITS, inexactNumberLiterals, numberPaths } from "../../ingest/exact-token-amounts.ts";
import { checkWebhookUrl, type WebhookUrlOptions } from "../../notify/ssrf.ts";
import { channelOffMessage } from "../../notify/transports.ts";
import { ProblemError, invalid, type FieldError } from "../problem.ts";

export type CreateAlertInput = {
  walletId: string;
  condition: Condition;
  threshold?: number;
  notificationMethod: NotificationMethod;
  webhookUrl?: string;
  recipient?: string;
  cooldownSeconds?: number;
  token?: string;
  windowSeconds?: number;
  ignoreOwnWallets?: boolean;
};

export type UpdateAlertInput = {
  status?: "active" | "paused";
  threshold?: number;
  cooldownSeconds?: number;
  recipient?: string;
  webhookUrl?: string;
};

export type AlertSettings = {
  threshold: number;
  webhookUrl: string | null;
  recipient: string | null;
  cooldownSeconds: number;
  token: string | null;
  windowSeconds: number | null;
  ignoreOwnWallets: boolean;
};

/**
 * channelsOff: the channels this deployment cannot send by (notify/transports.ts). An alert on
 * one would only make notifications that reach nobody, so it is refused when made or resumed.
 */
export async function checkNewAlert(
  body: CreateAlertInput,
  claims: ClaimedContacts,
  webhookRules: WebhookUrlOptions,
  smsRules: SmsNumberRules,
  channelsOff: readonly NotificationMethod[] = [],
): Promise<AlertSettings> {
  const problems: FieldError[] = [];
  const fail = (field: string, message: string) => problems.push({ path: `body.${field}`, message });
  if (body.notificationMethod !== "webhook" && channelsOff.includes(body.notificationMethod)) {
    fail("notificationMethod", `${channelOffMessage(body.notificationMethod)}; choose another channel`);
  }

  let threshold = 0;
  const checked = effectiveThreshold(body.condition, body.threshold);
  if (checked.ok) threshold = checked.threshold;
  else fail("threshold", checked.message);
  let token: string | null = null;
  if (body.token !== undefined && body.condition !== "large_transfer") {
    fail("token", "is only used by large_transfer alerts");
  } else if (body.token !== undefined) {
    const filter = tokenFilter(body.token);
    if (filter.ok) token = filter.token;
    else fail("token", filter.message);
  }
  // A window sums amounts, and amounts of different tokens are never added (the range is the schema's).
  if (body.windowSeconds !== undefined && body.condition !== "large_transfer") {
    fail("windowSeconds", "is only used by large_transfer alerts");
  } else if (body.windowSeconds !== undefined && body.token === undefined) {
    fail("windowSeconds", "requires token: a window sums the wallet's sends of one token, and amounts of different tokens are never added");
  }
  // Only transfers have another side that can be one of the caller's wallets.
  if (body.ignoreOwnWallets !== undefined && body.condition !== "large_transfer") {
    fail("ignoreOwnWallets", "is only used by large_transfer alerts");
  }

  let recipient: string | null = null;
  if (body.notificationMethod === "webhook") {
    if (body.webhookUrl === undefined) fail("webhookUrl", "is required for webhook alerts");
    if (body.recipient !== undefined) fail("recipient", "is not used by webhook alerts (they go to webhookUrl)");
  } else {
    if (body.webhookUrl !== undefined) fail("webhookUrl", `is only used by webhook alerts, not ${body.notificationMethod}`);
    const resolved = resolveRecipient(body.notificationMethod, body.recipient, claims, smsRules);
    if (resolved.ok) recipient = resolved.recipient;
    else fail("recipient", resolved.message);
  }
  // The destination check may ask DNS, so it runs only for an otherwise valid body.
  if (problems.length === 0 && body.webhookUrl !== undefined) {
    await checkDestination(body.webhookUrl, webhookRules, fail);
  }
  throwIfAny(problems);

  return {
    threshold,
    webhookUrl: body.webhookUrl ?? null,
    recipient,
    cooldownSeconds: body.cooldownSeconds ?? 0,
    token,
    windowSeconds: body.windowSeconds ?? null,
    ignoreOwnWallets: body.ignoreOwnWallets ?? false,
  };
}

/** Checks a PATCH body against the alert it changes; returns the changes to store. */
export async function checkAlertChanges(
  body: UpdateAlertInput,
  alert: AlertRow,
  webhookRules: WebhookUrlOptions,
  smsRules: SmsNumberRules,
  channelsOff: readonly NotificationMethod[] = [],
): Promise<AlertChanges> {
  if (Object.keys(body).length === 0) {
    throw new ProblemError("validation_failed", "body must change at least one of status, threshold, cooldownSeconds, recipient, webhookUrl", {
      errors: [{ path: "body", message: "must change at least one of status, threshold, cooldownSeconds, recipient, webhookUrl" }],
    });
  }
  const problems: FieldError[] = [];
  const fail = (field: string, message: string) => problems.push({ path: `body.${field}`, message });
  const changes: AlertChanges = {};
  // Pausing, or a threshold or cooldown, stays possible: only what would send again is refused.
  const method = alert.notificationMethod;
  if (method !== "webhook" && channelsOff.includes(method)) {
    if (body.status === "active") fail("status", `cannot be active: ${channelOffMessage(method)}`);
    if (body.recipient !== undefined) fail("recipient", `cannot change: ${channelOffMessage(method)}`);
  }
  if (body.status !== undefined) changes.status = body.status;
  if (body.cooldownSeconds !== undefined) changes.cooldownSeconds = body.cooldownSeconds;

  if (body.threshold !== undefined) {
    const threshold = effectiveThreshold(alert.condition, body.threshold);
    if (threshold.ok) changes.threshold = threshold.threshold;
    else fail("threshold", threshold.message);
  }
  if (body.recipient !== undefined) {
    if (alert.notificationMethod === "webhook") {
      fail("recipient", "is not used by webhook alerts (they go to webhookUrl)");
    } else {
      // An explicit recipient only: the token's claims are a default for creation, not for changes.
      const resolved = resolveRecipient(alert.notificationMethod, body.recipient, { email: undefined, phone: undefined }, smsRules);
      if (resolved.ok) changes.recipient = resolved.recipient;
      else fail("recipient", resolved.message);
    }
  }
  if (body.webhookUrl !== undefined) {
    if (alert.notificationMethod !== "webhook") {
      fail("webhookUrl", `is only used by webhook alerts, not ${alert.notificationMethod}`);
    } else if (problems.length === 0) {
      if (await checkDestination(body.webhookUrl, webhookRules, fail)) changes.webhookUrl = body.webhookUrl;
    }
  }
  throwIfAny(problems);
  return changes;
}

const THRESHOLD_NUMBER = numberPaths(".threshold");

/**
 * Refuses (400 at `body.threshold`) a create or change whose threshold was sent as a number
 * literal a double does not hold exactly. JSON.parse rounds it before any check runs, and the
 * alert would then fire at amounts its owner excluded: 9999999.999999999 would be stored as
 * 9999999.999999998 and fire on a transfer of 9999999.999999998; 99999999.999999999 would be
 * 100000000. Read from the body as sent (`body`, the route's raw body), as ingest reads amounts.
 */
export function assertExactThreshold(body: Buffer): void {
  if (inexactNumberLiterals(body, THRESHOLD_NUMBER).length > 0) {
    throw invalid("body.threshold", `${INEXACT_DIGITS}; it would be judged as a rounded threshold`);
  }
}

async function checkDestination(
  url: string,
  rules: WebhookUrlOptions,
  fail: (field: string, message: string) => void,
): Promise<boolean> {
  const verdict = await checkWebhookUrl(url, rules);
  // The reason is a sentence that starts with the field's name; the field error omits it.
  if (!verdict.ok) fail("webhookUrl", verdict.reason.replace(/^webhookUrl /, ""));
  return verdict.ok;
}

function throwIfAny(problems: FieldError[]): void {
  if (problems.length === 0) return;
  const detail = problems.map((problem) => `${problem.path.replace(/^body\./, "")} ${problem.message}`).join("; ");
  throw new ProblemError("validation_failed", detail, { errors: problems });
}
