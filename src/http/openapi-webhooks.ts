// The OpenAPI document's `webhooks`: every request the service makes to an alert's webhookUrl.
// There are three: a firing (risk_alert.triggered), a test sent on request (risk_alert.test) and
// a cooldown's digest (risk_alert.suppressed), all by the deliver job through channels/webhook.ts. Nothing else goes there: the notice of a
// disabled alert goes to its owner by email, when an address is known, and nowhere else
// (queue/jobs/disabled-notice.ts). What the answers say is held to README's Notifications section.
// The bodies come from notify/payload-schema.ts; what each answer leads to is classifyOutcome
// and marksAlertGone (notify/retry-policy.ts), which the test of this file holds WEBHOOK_ANSWERS to.
import { DEFAULT_RETRY_SCHEDULE } from "../config.ts";
import { MAX_PREVIOUS_SECRETS } from "../db/queries/notifications.ts";
import { FAILING_DISABLES_AFTER_MS } from "../notify/alert-health.ts";
import { DEFAULT_CHANNEL_TIMEOUT_MS } from "../notify/channels/index.ts";
import { DELIVERED_BODY_LIMIT, USER_AGENT } from "../notify/channels/webhook.ts";
import { SuppressedPayloadSchema } from "../notify/digest-payload-schema.ts";
import { TestPayloadSchema, TriggeredPayloadSchema } from "../notify/payload-schema.ts";
import { RETRY_AFTER_MAX_MS, RETRY_AFTER_MIN_MS, type Verdict } from "../notify/retry-policy.ts";
import { PREVIOUS_SECRET_GRACE_MS } from "../notify/sign.ts";

type Json = Record<string, unknown>;

/** The body's media type: undici sends it as the Content-Type header. */
export const WEBHOOK_MEDIA_TYPE = "application/json";

const HOURS = 3_600_000;
/**
 * Who hears that an alert was disabled (README, Alert health). A webhook alert has no address of
 * its own: the email claim of its owner's token is the only one, and a client-credentials token
 * (a SIEM's, say) usually has none.
 */
const OWNER_TOLD =
  "its owner is told by email only if the token that created the alert, or one that PATCHed it since, carried an email claim; " +
  "otherwise nobody is told (the service only logs a warning), so watch the alert's status and disabledReason";
/** One `v1,` and the base64 of an HMAC-SHA256 (32 bytes: 43 characters and one "="). */
const SIGNATURE = "v1,[A-Za-z0-9+/]{43}=";

/** The request headers the service sets (sign.ts webhookHeaders, channels/webhook.ts); Content-Type is the body's media type. */
const REQUEST_HEADERS: Array<{ name: string; description: string; schema: Json }> = [
  {
    name: "webhook-id",
    description:
      "the notification's id (ntf_…, as in GET /v1/notifications/{notificationId}): the same on every attempt at it, so de-duplicate on it",
    schema: { type: "string", pattern: "^ntf_" },
  },
  {
    name: "webhook-timestamp",
    description: "Unix seconds of this attempt (not of the notification): refuse one too far from now (the Standard Webhooks libraries allow 5 minutes) to stop replays",
    schema: { type: "integer", format: "int64", minimum: 0 },
  },
  {
    name: "webhook-signature",
    description:
      "space-separated signatures v1,<base64>: each the HMAC-SHA256 of {webhook-id}.{webhook-timestamp}.{the body's raw bytes}, keyed with the bytes " +
      `that a whsec_ secret encodes (the base64 after whsec_). One for the alert's current secret, and one for each replaced secret still within ` +
      `${PREVIOUS_SECRET_GRACE_MS / HOURS} h of its rotation (at most ${MAX_PREVIOUS_SECRETS}); the request is genuine when any one matches`,
    schema: { type: "string", pattern: `^${SIGNATURE}( ${SIGNATURE}){0,${MAX_PREVIOUS_SECRETS}}$` },
  },
  { name: "user-agent", description: "the service, by name and version", schema: { type: "string", const: USER_AGENT } },
];

/**
 * Each answer a webhook receiver can give, keyed as OpenAPI keys responses (a status, a range
 * or `default`), with the verdict the worker reaches (classifyOutcome) and whether it disables
 * the alert at once (marksAlertGone).
 */
export const WEBHOOK_ANSWERS: Readonly<Record<string, { verdict: Verdict; disablesAlert: boolean; retryAfter: boolean; description: string }>> = (() => {
  const schedule = DEFAULT_RETRY_SCHEDULE.replaceAll(",", ", ");
  const failed = (why: string) =>
    `${why}: the notification fails, with no further attempt unless its owner redelivers it (then it comes again under the same webhook-id), and the alert's failure run starts (or goes on): ` +
    `an active alert whose notifications keep failing for ${FAILING_DISABLES_AFTER_MS / HOURS} h is disabled, and ${OWNER_TOLD}. Any delivery ends the run`;
  const retried = (what: string) => ({
    verdict: "retry" as const,
    disablesAlert: false,
    retryAfter: true,
    description:
      `${what}: tried again, with the same webhook-id and body, on the retry schedule (RETRY_SCHEDULE, by default ${schedule} after the first attempt, each ±20 %). ` +
      `A Retry-After (seconds or an HTTP date) is honoured: the next attempt waits at least that long (clamped to ${RETRY_AFTER_MIN_MS / 1000} s – ${RETRY_AFTER_MAX_MS / HOURS} h), ` +
      "never less than the schedule's wait, and never as an extra attempt. Once the schedule runs out, the notification fails as for any other status (default)",
  });
  return {
    "2XX": {
      verdict: "delivered",
      disablesAlert: false,
      retryAfter: false,
      description:
        "delivered: no further attempt is planned. The same notification can still arrive again, under the same webhook-id " +
        `(an answer that came after the ${DEFAULT_CHANNEL_TIMEOUT_MS / 1000} s timeout; a delivery job that stalled and ran twice), so de-duplicate on webhook-id. ` +
        `The body is not read for the verdict; its first ${DELIVERED_BODY_LIMIT} bytes are kept in the attempt log`,
    },
    "408": retried("Request Timeout"),
    "410": {
      verdict: "permanent",
      disablesAlert: true,
      retryAfter: false,
      description:
        `Gone: the endpoint is retired. The notification fails, and the alert (if active) is disabled at once, a test's too; ${OWNER_TOLD}. ` +
        "It sends nothing until its status is PATCHed back to active",
    },
    "425": retried("Too Early"),
    "429": retried("Too Many Requests"),
    "5XX": retried("a server error"),
    default: {
      verdict: "permanent",
      disablesAlert: false,
      retryAfter: false,
      description: failed("any other status (a 3xx too: redirects are not followed; every other 4xx)"),
    },
  };
})();

const RETRY_AFTER_HEADER = {
  description: `seconds or an HTTP date: the next attempt waits at least this long (clamped to ${RETRY_AFTER_MIN_MS / 1000} s – ${RETRY_AFTER_MAX_MS / HOURS} h), never less than the schedule's wait`,
  schema: { type: "string" },
};

const OPERATION_NOTE =
  `Sent with a timeout of ${DEFAULT_CHANNEL_TIMEOUT_MS / 1000} s for the answer's headers and body together; no answer in time, or a network error, is retried as a 5xx is (an address the SSRF guard refuses fails at once). ` +
  "A receiver may get a notification more than once (an answer lost after it was processed): de-duplicate on webhook-id. " +
  "Notifications are not delivered in order: they are sent concurrently, and a retry arrives after notifications made later. " +
  "To order them, sort by the body's timestamp, then by data.transaction.blockTime and slot where there is a transaction; a firing's body carries no sequence number. " +
  "The notice that an alert was disabled is never sent here: it goes by email, and only to an address the owner's token carried.";

function operation(operationId: string, summary: string, description: string, body: Json) {
  return {
    post: {
      operationId,
      summary,
      description: `${description}\n\n${OPERATION_NOTE}`,
      tags: ["webhooks"],
      // No bearer token: the receiver checks webhook-signature instead.
      security: [],
      parameters: REQUEST_HEADERS.map((header) => ({ in: "header", required: true, ...header })),
      requestBody: { required: true, content: { [WEBHOOK_MEDIA_TYPE]: { schema: body } } },
      responses: Object.fromEntries(
        Object.entries(WEBHOOK_ANSWERS).map(([status, answer]) => [
          status,
          { description: answer.description, ...(answer.retryAfter ? { headers: { "retry-after": RETRY_AFTER_HEADER } } : {}) },
        ]),
      ),
    },
  };
}

/** The document's `webhooks`, keyed by the body's `type`. A fresh copy each time: the document's transforms change it in place. */
export function webhooksDocument(): Record<string, Json> {
  const copy = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Json;
  return {
    "risk_alert.triggered": operation(
      "riskAlertTriggered",
      "An alert fired: POSTed to its webhookUrl",
      "One firing of an alert that a cooldown did not suppress. `transaction` is there when a transaction fired it " +
        "(large_transfer, suspicious_counterparty, unusual_activity), with the fields of an entry of GET /v1/transactions; " +
        "a risk_score_increase carries no `transaction` key at all. What `reason` says is also in optional fields, each where it applies: " +
        "`direction` and `counterparty` (its risk and every label, with each label's source) for a firing with a transaction, " +
        "`activity` for unusual_activity, `previousScore` for risk_score_increase, `window` for a large_transfer with windowSeconds fired by the sum of its sends; " +
        "a notification made before they were added has none.",
      copy(TriggeredPayloadSchema),
    ),
    "risk_alert.test": operation(
      "riskAlertTest",
      "A test notification (POST /v1/risk/alerts/{alertId}/test): POSTed to the alert's webhookUrl",
      "Sent on request, also for a disabled alert (to check a mended endpoint before re-enabling it); its answer is judged like any other: a 410 disables the alert.",
      copy(TestPayloadSchema),
    ),
    "risk_alert.suppressed": operation(
      "riskAlertSuppressed",
      "A cooldown ended that held firings back: POSTed to the alert's webhookUrl",
      "Within an alert's cooldownSeconds after a notification, further firings are recorded as suppressed events and not sent. " +
        "Once that cooldown ends, one digest says what it held back: how many, when, the strongest of them (its reason, observed value and transaction) " +
        "with, for large_transfer and suspicious_counterparty, the other side of its transaction in full and that address's labels at the cooldown's end " +
        "(suppressed.strongest.counterparty: optional, added within v1 on 2026-11-28, so a digest built before has none) " +
        "and their event ids (at most 100). It is sent once per cooldown that held one back, never for one that held none, and only while the alert is active " +
        "(a paused or disabled alert's digest fails unsent). It starts no cooldown, has no event (GET /v1/notifications/{notificationId} shows eventId null), " +
        "and carries no `transaction` key: suppressed.strongest.transactionSignature names it. Built at its first attempt, it is the same body on every retry.",
      copy(SuppressedPayloadSchema),
    ),
  };
}
