// POST /v1/callbacks/twilio/sms-status — Twilio's status callbacks for the SMS this service
// sends while TWILIO_STATUS_CALLBACK_URL is set (notify/channels/sms.ts asks for them): what
// the carrier did with each message (sent, delivered, undelivered with 30003…), recorded on its
// notification for GET /v1/notifications/{id}.
//
// Twilio cannot send a JWT: it signs each request instead (X-Twilio-Signature: an HMAC-SHA1,
// keyed with the account's auth token, of the URL it called and the form's parameters). The
// signature is checked against the configured URL, never against the Host and path this request
// names: a proxy in front of the API rewrites those, and a caller chooses them.
//
// Twilio signs with its primary token only, and promoting a secondary token makes it the primary
// at once: during a rotation (TWILIO_AUTH_TOKEN the new token, TWILIO_AUTH_TOKEN_PREVIOUS the one
// being replaced) a signature by either is genuine, so that every process takes the callbacks
// signed before the promotion and after it, restarted yet or not.
//
// Everything Twilio sends in good faith is answered 204, also a message nobody here knows and a
// status we do not record: Twilio has nothing to fix, and a 4xx or 5xx would only fill its
// debugger (it does not retry a status callback). So a status of a sid no notification has yet
// is kept, not dropped: the worker records the sid only after Twilio's answer, and a fast
// callback can come first (db/queries/carrier-status.ts).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@fastify/type-provider-typebox";
import twilio from "twilio";
import { isCarrierStatus, isCarrierVerdict, recordCarrierStatus } from "../../db/queries/carrier-status.ts";
import type { Deps } from "../../deps.ts";
import { createRepeatedWarning } from "../../log-repeats.ts";
import { ProblemError } from "../problem.ts";

export const TWILIO_STATUS_CALLBACK_PATH = "/callbacks/twilio/sms-status";

const FORM = "application/x-www-form-urlencoded";
/** Twilio's callbacks are a few hundred bytes; anything near this is not one. */
const CALLBACK_BODY_LIMIT = 64 * 1024;
const SIGNATURE_HEADER = "x-twilio-signature";

/** What this route reads of Twilio's callback; Twilio sends more (SmsSid, From, To, ApiVersion…), and adds fields now and then. */
const CallbackSchema = Type.Object(
  {
    MessageSid: Type.String({ pattern: "^(SM|MM)[0-9a-fA-F]{32}$", description: "a Twilio message sid (SM or MM and 32 hex digits)" }),
    MessageStatus: Type.String({ minLength: 1, maxLength: 64 }),
    ErrorCode: Type.Optional(Type.String({ pattern: "^\\d{0,9}$", description: "a Twilio error code" })),
  },
  { additionalProperties: true },
);

type FormParams = Record<string, string | string[]>;

/** The form as Twilio signed it: a parameter given twice keeps both values (validateRequest signs each). */
function parseForm(text: string): FormParams {
  const params: FormParams = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = params[name];
    params[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return params;
}

const forbidden = (detail: string) => new ProblemError("forbidden", detail);

export function twilioStatusCallbackRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Scoped to this plugin: the rest of the API takes JSON only.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(FORM, { parseAs: "string", bodyLimit: CALLBACK_BODY_LIMIT }, (_request, body, done) =>
      done(null, parseForm(body as string)),
    );
    app.addContentTypeParser("*", (request, _payload, done) =>
      done(new ProblemError("unsupported_media_type", `Content-Type ${request.headers["content-type"] ?? "(none)"} is not accepted; Twilio sends ${FORM}`)),
    );
    // A wrong TWILIO_AUTH_TOKEN or a URL that is not the one Twilio calls refuses every callback.
    const warnRefused = createRepeatedWarning(
      deps.logger,
      "twilio status callback refused (403): check that TWILIO_STATUS_CALLBACK_URL is exactly the URL Twilio calls, and TWILIO_AUTH_TOKEN " +
        "(during a rotation, TWILIO_AUTH_TOKEN_PREVIOUS: Twilio signs with its primary token)",
    );
    const { statusCallbackUrl, authToken, previousAuthToken } = deps.config.twilio;
    const signingTokens = [authToken, previousAuthToken].filter((token) => token !== undefined);
    // Said at start (never the value), so that a rotation's previous token is not left in force once it is done.
    if (statusCallbackUrl && previousAuthToken) {
      deps.logger.info("TWILIO_AUTH_TOKEN_PREVIOUS is set: SMS status callbacks signed with it are accepted as well; unset it once the new token is promoted in Twilio");
    }

    app.post(
      TWILIO_STATUS_CALLBACK_PATH,
      {
        bodyLimit: CALLBACK_BODY_LIMIT,
        config: { public: true },
        // Before the body is read: an unsigned caller gets nothing parsed.
        onRequest: async (request) => {
          if (!statusCallbackUrl) {
            throw new ProblemError("not_found", "SMS status callbacks are not enabled here (TWILIO_STATUS_CALLBACK_URL is not set)");
          }
          if (typeof request.headers[SIGNATURE_HEADER] !== "string") {
            warnRefused(new Error("no X-Twilio-Signature"));
            throw forbidden("the request has no X-Twilio-Signature header");
          }
        },
        // Signed parameters first, their shape second: authentication comes before anything else.
        preValidation: async (request) => {
          const signature = request.headers[SIGNATURE_HEADER] as string;
          const params = (request.body ?? {}) as FormParams;
          // Each token tried (map, not some): which one signed takes no less time than neither.
          const signedBy = signingTokens.map((token) => twilio.validateRequest(token, signature, statusCallbackUrl!, params));
          if (!signedBy.includes(true)) {
            warnRefused(new Error("X-Twilio-Signature does not match"));
            throw forbidden("the X-Twilio-Signature header does not match this request");
          }
        },
        schema: { hide: true, body: CallbackSchema },
      },
      async (request, reply) => {
        const { MessageSid: messageSid, MessageStatus: status, ErrorCode: errorCode } = request.body;
        if (!isCarrierStatus(status)) {
          request.log.info({ messageSid, status }, "twilio status callback: a status this service does not record; ignored");
          return reply.code(204).send();
        }
        const { outcome, recorded } = await recordCarrierStatus(deps.sql, {
          messageSid,
          status,
          errorCode: errorCode ? Number(errorCode) : null,
          at: deps.now(),
        });
        // A verdict that the worker applies from a kept row is not counted here: it came before
        // Twilio's answer reached the worker, which a verdict (seconds after sending) hardly does.
        if (recorded && isCarrierVerdict(recorded)) app.carrierMetrics.verdict(recorded);
        // Its attempt not recorded yet (a callback faster than the worker), or a sid that never will
        // be: a message sent before the setting, one whose notification was deleted with its alert.
        if (outcome === "kept") {
          request.log.info({ messageSid, status }, "twilio status callback for a message no notification has yet; kept for its attempt's record, for an hour");
        }
        return reply.code(204).send();
      },
    );
  };
}
