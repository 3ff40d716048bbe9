// SMS through the official twilio SDK, pointed at TWILIO_BASE_URL (tests and staging use a
// stand-in). Without Twilio credentials, SMS_TRANSPORT=log writes a line per message to the log
// instead (the demo, compose): recorded as delivered, said not sent in the attempt and the
// metric; with neither, SMS is off and each attempt fails as the deployment's fault. With TWILIO_STATUS_CALLBACK_URL each
// message asks Twilio to report what the carrier did with it, naming it by the sid kept here.
// Before any of that, the number is judged again as it was when the alert was made
// (domain/sms-number.ts): the rules, or SMS_ALLOWED_COUNTRIES, may have tightened since.
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import twilio from "twilio";
import type RequestClient from "twilio/lib/base/RequestClient.js";
import type TwilioServiceExceptionModule from "twilio/lib/base/TwilioServiceException.js";
import type { Config, SmsTransport } from "../../config.ts";
import { checkSmsNumber, countryOfNumber } from "../../domain/sms-number.ts";
import { maskedNumber } from "../../domain/recipient-mask.ts";
import { createRepeatGate, REPEAT_LOG_WINDOW_MS } from "../../log-repeats.ts";
import type { Logger } from "../../logger.ts";
import { redactUrl } from "../../redact-url.ts";
import { PERMANENT_ERROR_CODES } from "../retry-policy.ts";
import { withoutPeerAddress } from "./peer-address.ts";
import { renderSms } from "../render-sms.ts";
import type { AttemptResult, Channel, OutboundMessage } from "./index.ts";
import { channelOffMessage, smsTransportOf } from "../transports.ts";

const TWILIO_API = "https://api.twilio.com";

export type SmsChannelOptions = {
  twilio: Config["twilio"];
  /** SMS_TRANSPORT: only `log` (without Twilio's credentials) logs messages; the credentials alone are Twilio. */
  transport?: SmsTransport | undefined;
  /** SMS_ALLOWED_COUNTRIES: undefined, every country. */
  allowedCountries: Config["smsAllowedCountries"];
  timeoutMs: number;
  logger: Logger;
};


// Not exported by the SDK's index; what its Version.throwException raises for an RFC 9457 body.
const { default: TwilioServiceException } = createRequire(import.meta.url)(
  "twilio/lib/base/TwilioServiceException.js",
) as typeof TwilioServiceExceptionModule;

/** The SDK's exception for a failed answer, with the answer's Retry-After, which the SDK drops. */
type TwilioErrorWithRetryAfter = Error & { status: number; retryAfter: string };

/**
 * The SDK builds every URL on https://api.twilio.com; this client rewrites that origin to
 * the configured base URL. The SDK's only extension point for this is a RequestClient
 * subclass, hence a class here.
 *
 * It also keeps Twilio's Retry-After (429, 503): the SDK turns a failed answer into its
 * exception from the status and body alone. A non-2xx answer with Retry-After is rejected
 * here with the exception the SDK would raise for it (Version.throwException) plus
 * `retryAfter`; the SDK passes the client's rejection on to `messages.create` unchanged.
 * Other answers go to the SDK as before.
 */
export function baseUrlRequestClient(baseUrl: string, timeoutMs: number): twilio.RequestClient {
  const base = baseUrl.replace(/\/+$/, "");
  class BaseUrlRequestClient extends twilio.RequestClient {
    override async request<TData>(opts: RequestClient.RequestOptions<TData>) {
      const uri = opts.uri.startsWith(TWILIO_API) ? base + opts.uri.slice(TWILIO_API.length) : opts.uri;
      let response;
      try {
        response = await super.request<TData>({ ...opts, uri, timeout: opts.timeout ?? timeoutMs });
      } catch (error) {
        // Only the deadline below cancels a request: said as the timeout it is (retried).
        if ((error as { code?: unknown }).code !== "ERR_CANCELED") throw error;
        throw Object.assign(new Error(`no complete answer from Twilio within ${timeoutMs} ms`), { code: "ETIMEDOUT" });
      }
      const retryAfter = headerValue(response.headers, "retry-after");
      if (retryAfter !== undefined && (response.statusCode < 200 || response.statusCode >= 300)) {
        throw Object.assign(sdkException(response), { retryAfter }) satisfies TwilioErrorWithRetryAfter;
      }
      if (response.statusCode >= 200 && response.statusCode < 300 && response.statusCode !== 204 && !isJsonObject(response.body)) {
        throw unconfirmedAnswer(response);
      }
      return response;
    }
  }
  const client = new BaseUrlRequestClient({ timeout: timeoutMs, keepAlive: true, autoRetry: false });
  // axios's `timeout` bounds only the wait for the answer's headers: an answer whose body then
  // trickles in held the send for ever, so a stopping worker gave up on the job after its
  // grace and sent the SMS again on restart (an SMS has no id a phone could drop a repeat by).
  // The whole exchange gets the deadline, as webhooks and email do.
  client.axios.interceptors.request.use((config) => {
    config.signal = AbortSignal.timeout(timeoutMs);
    return config;
  });
  return client;
}

/** What the SDK's Version.throwException raises for this answer: an RFC 9457 problem or its legacy RestException. */
function sdkException(response: { statusCode: number; body: unknown }): Error & { status: number } {
  let body: unknown = response.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      body = null;
    }
  }
  return TwilioServiceException.isRFC9457Response(body) ? new TwilioServiceException(response) : new twilio.RestException(response);
}

/**
 * The code of a 2xx answer whose body is not a JSON object, so not a resource of Twilio's (a
 * proxy or gateway at TWILIO_BASE_URL answering 200 with a page of its own, or mangling
 * Twilio's 201): whether Twilio took the message is unknown. The SDK would JSON.parse it
 * and throw a bare SyntaxError, which read as the SDK refusing the message before sending
 * it (permanent, and counted against the alert) although the SMS may have gone out.
 */
const UNCONFIRMED_ANSWER = "EUNCONFIRMED";

/**
 * The error for such an answer: retried as the provider's trouble (describeTwilioError), as an
 * answer cut off after Twilio's 201 began is, so such an SMS can go twice; never counted
 * against the alert. Says the status and the body's type and size, not the body.
 */
function unconfirmedAnswer(response: { statusCode: number; body: unknown; headers?: unknown }): Error & { code: string } {
  const type = headerValue(response.headers, "content-type")?.split(";")[0]?.trim() || "no content type";
  const size = typeof response.body === "string" ? `${Buffer.byteLength(response.body)} bytes` : `a JSON ${response.body === null ? "null" : Array.isArray(response.body) ? "array" : typeof response.body}`;
  return Object.assign(
    new Error(`HTTP ${response.statusCode} answered with a body that is not Twilio's (${type}, ${size}): the SMS may have been sent, and a retry may send it twice`),
    { code: UNCONFIRMED_ANSWER },
  );
}

/** Whether an answer's body (as axios gives it: parsed when it was JSON, else a string) is a JSON object. */
function isJsonObject(body: unknown): boolean {
  let value = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return false;
    }
  }
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A response header by name, whatever its case (axios gives them lower-case); the first of repeated values. */
function headerValue(headers: unknown, name: string): string | undefined {
  if (headers === null || typeof headers !== "object") return undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    const first: unknown = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string" && first.trim() !== "") return first.trim();
    if (typeof first === "number") return String(first);
  }
  return undefined;
}

export function createSmsChannel(options: SmsChannelOptions): Channel & { describe: () => string; close: () => Promise<void> } {
  const { accountSid, authToken, from, baseUrl, statusCallbackUrl } = options.twilio;
  // Asked for only when this API can take the callbacks (routes/twilio-status-callback.ts).
  const statusCallback = statusCallbackUrl ? { statusCallback: statusCallbackUrl } : {};
  const client =
    accountSid && authToken && from
      ? twilio(accountSid, authToken, { httpClient: baseUrlRequestClient(baseUrl, options.timeoutMs), autoRetry: false })
      : undefined;

  const mode = smsTransportOf({ twilio: options.twilio, smsTransport: options.transport });
  const smsRules = { allowedCountries: options.allowedCountries };
  const warnCountryNotEnabled = countryNotEnabledWarning(options.logger);

  const send = async (message: OutboundMessage): Promise<AttemptResult> => {
    // Nothing to send with: the deployment's to fix, before anything of the recipient's is judged.
    if (mode === undefined) return { deploymentFault: "unconfigured", error: `not sent: ${channelOffMessage("sms")}`, durationMs: 0 };
    // A missing number is left to the SDK, which refuses the message (BAD_MESSAGE).
    if (message.destination) {
      const verdict = checkSmsNumber(message.destination, smsRules);
      if (!verdict.ok) return refusedNumber(message.destination, verdict.reason);
    }
    const body = renderSms(message.payload, message.attemptAt);
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    if (!client || !from) {
      // The number and the text are the recipient's: the number masked and the length at info
      // (until 2026-11-28 both whole, at warn, into every log pipeline); the text at debug only.
      const to = maskedNumber(message.destination);
      options.logger.info({ notificationId: message.notificationId, to, characters: body.length }, "sms not sent (SMS_TRANSPORT=log): logged instead");
      options.logger.debug({ notificationId: message.notificationId, to, sms: body }, "sms text (SMS_TRANSPORT=log)");
      return { durationMs: 0, notSent: true, responseBody: "not sent: written to the log (SMS_TRANSPORT=log)" };
    }
    try {
      const sent = await client.messages.create({ to: message.destination, from, body, ...statusCallback });
      return {
        statusCode: 201,
        responseBody: JSON.stringify({ sid: sent.sid, status: sent.status }),
        providerMessageId: sent.sid,
        durationMs: elapsed(),
      };
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === TWILIO_GEO_PERMISSION) warnCountryNotEnabled(message);
      return { ...describeTwilioError(error), durationMs: elapsed() };
    }
  };

  return {
    send,
    // TWILIO_BASE_URL may carry a proxy's credentials: the start-up line shows it without them.
    describe: () => (client ? `Twilio ${redactUrl(baseUrl)}` : mode === "log" ? "the log, not sent (SMS_TRANSPORT=log)" : "off (TWILIO_* not set)"),
    close: async () => {},
  };
}

/**
 * A number this service does not text, found before sending: permanent, and the recipient's
 * (counted against the alert, as an SSRF refusal of a webhook URL at delivery is), since the
 * owner is the one who can fix it with a PATCH of `recipient`; waiting would change nothing.
 */
function refusedNumber(number: string, reason: string): AttemptResult {
  return { errorCode: PERMANENT_ERROR_CODES.badDestination, error: `not sent: ${number} ${reason}`, durationMs: 0 };
}

const TWILIO_AUTHENTICATE = 20003;

/**
 * Twilio's refusals of our From number (TWILIO_FROM), whatever the recipient: 21212 not a
 * valid From, 21601 not an SMS-capable number assigned to this account, 21606 not
 * SMS-capable for this account, 21616 matches several numbers of this account, 21659 not a
 * Twilio number, 21660 it belongs to another account or subaccount than TWILIO_ACCOUNT_SID
 * (a number moved between subaccounts), and 21611 its queue of waiting messages is full
 * (temporary).
 */
const TWILIO_SENDER_REFUSED: ReadonlySet<number> = new Set([21212, 21601, 21606, 21611, 21616, 21659, 21660]);

/**
 * 21408 "Permission to send an SMS has not been enabled for the region indicated by the 'To'
 * number": the account's Geo Permissions (a console setting of the operator's) leave out the
 * number's country. The recipient's, as a number outside SMS_ALLOWED_COUNTRIES is: the operator
 * chose not to serve that country, and any caller can name a number there (that setting
 * defaults to every country). Taken as the deployment's until 2026-11-28, each one was logged
 * at error as a setting to fix, retried for about 27 h and never counted against its alert, so
 * one caller's alert to such a number kept the operator's delivery alarms ringing.
 */
const TWILIO_GEO_PERMISSION = 21408;

/** What the attempt's error says of a 21408 before Twilio's words: the owner reads it. */
const COUNTRY_NOT_ENABLED = "the number's country is not enabled for this service's SMS (its Twilio account's Geo Permissions), so it is not texted: give the alert a number in a country the service serves";

/**
 * A 21408 at warn, once a minute per country (the repeats at debug): the operator may have left
 * the country out on purpose, and then has nothing to mend, but should hear that callers try it.
 */
function countryNotEnabledWarning(logger: Logger): (message: OutboundMessage) => void {
  const gate = createRepeatGate(REPEAT_LOG_WINDOW_MS);
  const text =
    "Twilio refused an SMS to a country its account's Geo Permissions leave out (21408): the notification failed and counts against its alert; " +
    "enable the country in the Twilio console to serve it, or set SMS_ALLOWED_COUNTRIES so that alerts to it are refused when made";
  return (message) => {
    const country = countryOfNumber(message.destination) ?? "none";
    const { log, suppressed } = gate(country);
    const fields = { country, notificationId: message.notificationId };
    if (!log) return logger.debug(fields, `${text} (repeated)`);
    logger.warn({ ...fields, ...(suppressed > 0 ? { repeatsNotLogged: suppressed } : {}) }, text);
  };
}

/**
 * 21608 "The number … is unverified. Trial accounts cannot send messages to unverified
 * numbers": the account is a trial one. Upgraded (or the number verified in the console), it
 * sends; the recipient is not at fault, as for an email sandbox's "Email address is not verified".
 */
const TWILIO_TRIAL_ACCOUNT = 21608;

/**
 * Twilio's answer decides: its HTTP status (400 for 21211 invalid To, 21610 unsubscribed,
 * 21614 not a mobile number…; 429; 5xx) goes through the retry policy like any HTTP status.
 * A transport error carries a code (retried); an error with neither is the SDK refusing the
 * message before sending it, which no retry can fix. A refusal of our credentials, our From
 * number or our trial account is retried whatever its status (see
 * DeliveryOutcome.deploymentFault); Twilio unreachable, busy (429) or failing (5xx) is
 * Twilio's trouble, not the recipient's (DeliveryOutcome.providerUnavailable), and so is a
 * 2xx answer that is not Twilio's (UNCONFIRMED_ANSWER). An answer without a Twilio error code
 * did not come from Twilio's API but from what TWILIO_BASE_URL points at (twilioFault). A
 * Retry-After Twilio sent with its answer (the error's `retryAfter`) is passed on as the
 * attempt's.
 */
export function describeTwilioError(error: unknown): Omit<AttemptResult, "durationMs"> {
  const { status, code, message, detail, moreInfo, retryAfter } = (error ?? {}) as {
    status?: unknown;
    code?: unknown;
    message?: string;
    detail?: unknown;
    moreInfo?: unknown;
    retryAfter?: unknown;
  };
  if (typeof status === "number") {
    const twilioCode = typeof code === "number" ? ` ${code}` : "";
    const said = typeof detail === "string" && detail !== "" ? detail : (message ?? `HTTP ${status}`);
    const text = code === TWILIO_GEO_PERMISSION ? `${COUNTRY_NOT_ENABLED} (Twilio: ${said})` : said;
    const more = typeof moreInfo === "string" ? ` (${moreInfo})` : "";
    const fault = twilioFault(status, code);
    // Said in the attempt's error (and so in the log line that names the setting to fix).
    const notTwilios = fault.deploymentFault !== undefined && typeof code !== "number" ? ` (${NOT_TWILIOS_ANSWER})` : "";
    return {
      statusCode: status,
      // Twilio's Retry-After (baseUrlRequestClient keeps it): the retry policy waits at least that long.
      ...(typeof retryAfter === "string" && retryAfter !== "" ? { retryAfter } : {}),
      ...fault,
      error: `Twilio${twilioCode}: ${text}${more}${notTwilios}`.slice(0, 1000),
    };
  }
  if (typeof code === "string") {
    return { errorCode: code, providerUnavailable: true, error: `${code}: ${withoutPeerAddress(message ?? "request failed")}` };
  }
  return { errorCode: PERMANENT_ERROR_CODES.badMessage, error: `refused before sending: ${message ?? "unknown error"}` };
}

/** What the attempt's error adds to a refusal that did not come from Twilio's API. */
const NOT_TWILIOS_ANSWER = "no Twilio error code: the answer of a proxy or a wrong path at TWILIO_BASE_URL, not Twilio's";

/**
 * 422 Unprocessable Content without a Twilio code: a server that checks requests against
 * Twilio's API description (the test stand-in) refused the message's content; the message's,
 * as Twilio's own 400s about it are.
 */
const CONTENT_REFUSED = 422;

function twilioFault(status: number, code: unknown): Pick<AttemptResult, "deploymentFault" | "providerUnavailable"> {
  // 401 / 20003 "Authenticate": the account SID or auth token is wrong, not the message.
  if (status === 401 || code === TWILIO_AUTHENTICATE) return { deploymentFault: "credentials" };
  if (typeof code === "number" && TWILIO_SENDER_REFUSED.has(code)) return { deploymentFault: "sender" };
  if (code === TWILIO_TRIAL_ACCOUNT) return { deploymentFault: "permission" };
  // 408: a proxy on the way gave up waiting (retried as any 408 is).
  if (status === 408 || status === 429 || status >= 500) return { providerUnavailable: true };
  // Twilio's API gives every refusal a numeric code. A redirect or a 4xx without one (404 from a
  // wrong path or host in TWILIO_BASE_URL, 407 from a proxy whose credentials there are wrong,
  // 403 from a firewall, a 301 from http to https) judged the deployment's way to Twilio, not
  // the recipient: retried on the schedule and never counted, as a refused login is.
  if (typeof code !== "number" && status !== CONTENT_REFUSED && status >= 300 && status < 500) return { deploymentFault: "credentials" };
  return {};
}
