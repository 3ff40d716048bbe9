// GET /v1/wallets/{walletId}/events: every event of the wallet's alerts in a period, oldest first,
// with a cursor (db/queries/wallet-events.ts). What a desk that must answer for "this wallet,
// March" exports in one pass: its alerts' events, the alerts deleted since included (the archive,
// which the per-alert routes no longer serve), each with its transaction's blockTime. Scoped by
// the caller: another caller's wallet is a 404, as on every wallet route.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { listWalletEvents, type WalletEventRow } from "../../db/queries/wallet-events.ts";
import { findWalletAddress } from "../../db/queries/wallets.ts";
import type { Deps } from "../../deps.ts";
import { invalid, notFound } from "../problem.ts";
import { described, errorResponses, idSchema, parseQueryInteger, queryInteger, refTo } from "../schemas.ts";
import { AlertEventSchema, EVENTS_LIMIT, EventsQuery } from "./alert-schemas.ts";
import { eventWindow } from "./event-window.ts";

const DESCRIPTION =
  "Every event of the wallet's alerts, those deleted since included (alertDeleted: true; an alert deleted with its wallet goes with the wallet), " +
  "oldest first: createdAt ascending, then eventId. since and until select a period by createdAt (at or after since, before until). " +
  "createdAt is when the service recorded the event, its evaluation's time; blockTime is the transaction's, when the service stores it. " +
  "To read on, send after= the eventId of the last event received, keeping since and until, until hasMore is false: an alert deleted " +
  "between two pages does not move its events, so no event is skipped or repeated. An event is dated when its evaluation began and listed " +
  "once that commits, moments later: a page that reaches the last seconds may be followed by an event dated before its end, so export a " +
  "period that has ended, or read its last minutes again. An after that is no event of the wallet's alerts is a 400.";

const EventItem = AlertEventSchema.properties;

const WalletEventsQuery = Type.Object(
  {
    limit: queryInteger({ ...EVENTS_LIMIT, description: "events to return" }),
    after: Type.Optional(
      idSchema("evt", "only the events listed after this one (later): the eventId of the last event received, of a deleted alert or not"),
    ),
    since: EventsQuery.properties.since,
    until: EventsQuery.properties.until,
  },
  { additionalProperties: false },
);

// A named schema: components.schemas in the OpenAPI document, a $ref where the route uses it (refTo, schema-components.ts).
export const WalletEventSchema = Type.Object(
  {
    eventId: EventItem.eventId,
    alertId: Type.String({ description: "the alert that fired, deleted or not" }),
    alertDeleted: Type.Boolean({
      description: "the alert has been deleted: the event is read from the archive of deleted alerts (its alert's routes answer 404)",
    }),
    condition: EventItem.condition,
    observed: EventItem.observed,
    suppressed: EventItem.suppressed,
    reason: EventItem.reason,
    createdAt: Type.String({ format: "date-time", description: "when the service recorded the event (its evaluation), not the transaction's time" }),
    transactionSignature: Type.Optional(Type.String({ description: "the transaction that fired it; absent for an event no transaction fired (a score change)" })),
    blockTime: Type.Union([Type.Integer(), Type.Null()], {
      description: "the transaction's blockTime, Unix seconds, as GET /v1/transactions shows it; null without transactionSignature, or when the service does not store that transaction",
    }),
    judgedSettings: EventItem.judgedSettings,
    riskScore: EventItem.riskScore,
    riskFactors: EventItem.riskFactors,
    notificationId: Type.Optional(
      Type.String({ description: "the notification the firing produced; absent for a suppressed event, and when none was made" }),
    ),
  },
  { $id: "WalletEvent", description: "one firing of one of the wallet's alerts, deleted alerts' included (GET /v1/wallets/{walletId}/events)" },
);

const WalletEventListSchema = Type.Object({
  events: Type.Array(refTo(WalletEventSchema)),
  hasMore: Type.Boolean({ description: "whether events go on past this page; to read on, set after to the eventId of its last event" }),
});

function walletEventJson(row: WalletEventRow) {
  return {
    eventId: row.eventId,
    alertId: row.alertId,
    alertDeleted: row.alertDeleted,
    condition: row.condition,
    observed: row.observed,
    suppressed: row.suppressed,
    reason: row.reason,
    createdAt: row.createdAt,
    ...(row.transactionSignature !== null ? { transactionSignature: row.transactionSignature } : {}),
    blockTime: row.blockTime,
    // The threshold stored as its exact decimal, shown as the alert's own threshold is (a number).
    judgedSettings: row.judgedSettings && { ...row.judgedSettings, threshold: Number(row.judgedSettings.threshold) },
    riskScore: row.riskScore,
    riskFactors: row.riskFactors,
    ...(row.notificationId !== null ? { notificationId: row.notificationId } : {}),
  };
}

export function walletEventRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/wallets/:walletId/events",
      {
        config: { scope: "alerts:read" },
        schema: {
          tags: ["wallets"],
          summary: "What the wallet's alerts fired in a period, deleted alerts' included, oldest first: a desk's export",
          description: DESCRIPTION,
          params: Type.Object({ walletId: idSchema("wal", "wallet") }, { additionalProperties: false }),
          querystring: WalletEventsQuery,
          response: { 200: described(WalletEventListSchema, "the wallet's events, oldest first, one page"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { walletId } = request.params;
        const limit = parseQueryInteger("limit", request.query.limit, EVENTS_LIMIT);
        const window = eventWindow(request.query);
        const owner = request.caller.sub;
        if (!(await findWalletAddress(deps.sql, owner, walletId))) throw notFound(`wallet ${walletId}`);
        const page = await listWalletEvents(deps.sql, owner, walletId, { limit, after: request.query.after }, window);
        if (!page) throw invalid("query.after", `must be the eventId of an event of wallet ${walletId}'s alerts`);
        return { events: page.rows.map(walletEventJson), hasMore: page.hasMore };
      },
    );
  };
}
