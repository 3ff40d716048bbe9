// GET /v1/risk/alerts/{alertId}/history: who changed the alert, when, and from what to what
// (db/queries/alert-changes.ts), oldest first, with a cursor. What a compliance desk shows when
// asked why a transfer raised no alert (the alert was paused then) or what an event was judged
// against. Scoped by the caller: another caller's alert is a 404. A deleted alert still answers,
// its deletion last: the history outlives the alert, as the archive of deleted alerts does.
import { Type, type FastifyPluginAsyncTypebox, type TSchema } from "@fastify/type-provider-typebox";
import { listAlertChanges, ownsOrOwnedAlert } from "../../db/queries/alert-changes.ts";
import type { Deps } from "../../deps.ts";
import { ALERT_ACTIONS } from "../../domain/alert-history.ts";
import { notFound } from "../problem.ts";
import { described, documentAsInteger, errorResponses, parseQueryInteger, queryInteger, refTo } from "../schemas.ts";
import { AlertIdParams, EVENTS_LIMIT } from "./alert-schemas.ts";

export const HISTORY_LIMIT = EVENTS_LIMIT;
/** changeId is a bigserial: the cursor takes any whole number a double holds exactly. */
export const HISTORY_AFTER = { min: 0, max: Number.MAX_SAFE_INTEGER, default: 0 } as const;

const DESCRIPTION =
  "Every change of the alert, oldest first: its creation (every setting), each PATCH that changed a setting (action paused or resumed " +
  "when it changed the status, else updated; only the settings it changed), the service's disabling after its notifications kept failing " +
  "(by: service), each rotation of its webhook secret (secret_rotated, never the secret) and its deletion, alone or with its wallet " +
  "(deleted: every setting as it was). changes holds each setting by the API's name as [before, after]. A deleted alert still answers " +
  "(its history outlives it). To read on, send after= the changeId of the last entry received: an entry committed later always has a " +
  "larger changeId, so a reader that resumes from its last one misses none. An alert made before the service kept a history begins " +
  "with the first change since.";

const HistoryQuery = Type.Object(
  {
    limit: queryInteger({ ...HISTORY_LIMIT, description: "entries to return" }),
    after: documentAsInteger(
      Type.Optional(
        Type.String({
          pattern: "^(0|[1-9][0-9]{0,15})$",
          description: `only the entries after this one: the changeId of the last entry received (0: from the first): a whole number from ${HISTORY_AFTER.min} to ${HISTORY_AFTER.max} (default 0)`,
          default: "0",
        }),
      ),
      HISTORY_AFTER,
    ),
  },
  { additionalProperties: false },
);

/** One setting's [before, after]: null where it had no value (before a creation, after a deletion). */
const pair = <T extends TSchema>(value: T, description: string) =>
  Type.Optional(Type.Array(Type.Union([value, Type.Null()]), { minItems: 2, maxItems: 2, description }));

const Changes = Type.Object(
  {
    walletId: pair(Type.String(), "created and deleted only"),
    condition: pair(Type.String(), "created and deleted only"),
    status: pair(Type.String(), "active, paused or disabled"),
    threshold: pair(Type.Number(), "as the alert shows it"),
    token: pair(Type.String(), "large_transfer's token filter"),
    notificationMethod: pair(Type.String(), "created and deleted only"),
    webhookUrl: pair(
      Type.String(),
      "webhook alerts: scheme, host, port and path only, then ?… where the URL had a query (#… a fragment), which is never recorded: it often carries the receiver's token",
    ),
    recipient: pair(Type.String(), "email and SMS alerts"),
    cooldownSeconds: pair(Type.Integer(), "seconds"),
    windowSeconds: pair(Type.Integer(), "large_transfer's window, seconds: created and deleted only, and only for an alert that has one"),
    ignoreOwnWallets: pair(Type.Boolean(), "large_transfer's ignoreOwnWallets: created and deleted only, and only for an alert that has it on"),
    disabledReason: pair(Type.String(), "set by the service's disabling, cleared by a PATCH of status"),
  },
  { description: "each setting the change changed, by the API's name: [before, after]; empty for a secret's rotation" },
);

// A named schema: components.schemas in the OpenAPI document, a $ref where the route uses it (refTo, schema-components.ts).
export const AlertChangeSchema = Type.Object(
  {
    changeId: Type.Integer({ minimum: 1, description: "the entry's number, larger for every later entry of the alert: the cursor (after)" }),
    at: Type.String({ format: "date-time", description: "when the change was made" }),
    by: Type.String({ description: "who made it: the caller's token sub, or service for the service's own (a disabling)" }),
    action: Type.Enum(ALERT_ACTIONS, { description: "what the change was" }),
    changes: Changes,
  },
  { $id: "AlertChange", description: "one change of a risk alert in its history (GET /v1/risk/alerts/{alertId}/history)" },
);

const HistorySchema = Type.Object({
  history: Type.Array(refTo(AlertChangeSchema)),
  hasMore: Type.Boolean({ description: "whether the history goes on past this page; to read on, set after to the changeId of its last entry" }),
});

export function alertHistoryRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/risk/alerts/:alertId/history",
      {
        config: { scope: "alerts:read" },
        schema: {
          tags: ["risk alerts"],
          summary: "Who changed a risk alert, when, and from what to what, oldest first: a deleted alert's too",
          description: DESCRIPTION,
          params: AlertIdParams,
          querystring: HistoryQuery,
          response: { 200: described(HistorySchema, "the alert's history, oldest first, one page"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { alertId } = request.params;
        const limit = parseQueryInteger("limit", request.query.limit, HISTORY_LIMIT);
        const after = parseQueryInteger("after", request.query.after, HISTORY_AFTER);
        if (!(await ownsOrOwnedAlert(deps.sql, request.caller.sub, alertId))) throw notFound(`alert ${alertId}`);
        const page = await listAlertChanges(deps.sql, request.caller.sub, alertId, { limit, after });
        return { history: page.rows, hasMore: page.hasMore };
      },
    );
  };
}
