// /v1/risk/alerts: interface 4.1 (create) and what a user of alerts needs besides: list,
// read, change, delete and the events an alert fired. Every query is scoped by the
// caller, so another caller's alert is a 404, never a 403.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import {
  deleteAlert,
  findAlert,
  findAlertByIdempotencyKey,
  insertAlert,
  listAlerts,
  updateAlert,
  type IdempotentAlert,
} from "../../db/queries/alerts.ts";
import { listAlertEvents } from "../../db/queries/events.ts";
import { findWalletAddress } from "../../db/queries/wallets.ts";
import type { Deps } from "../../deps.ts";
import { ownerEmailOf } from "../../domain/recipients.ts";
import { isId, newId } from "../../ids.ts";
import type { WebhookUrlOptions } from "../../notify/ssrf.ts";
import { generateWebhookSecret } from "../../notify/webhook-secret.ts";
import { channelsOff } from "../../notify/transports.ts";
import { IfMatchHeaders, PreconditionFailedResponse, entityTagOf, ifMatchOf, preconditionFailed, withEntityTag } from "../etag.ts";
import { IDEMPOTENCY_HEADER, IdempotencyHeaders, replayVerdict, requestFingerprint } from "../idempotency.ts";
import { assertNoBody } from "../no-body.ts";
import { ProblemError, capReached, invalid, notFound } from "../problem.ts";
import { keepRawBody, rawBody } from "../raw-body.ts";
import { NO_STORE, described, errorResponses, noStore, parseQueryInteger, withLocation } from "../schemas.ts";
import { assertExactThreshold, checkAlertChanges, checkNewAlert } from "./alert-input.ts";
import { eventWindow } from "./event-window.ts";
import {
  AlertIdParams,
  AlertListSchema,
  AlertRef,
  CreateAlertBody,
  CreateConflictResponse,
  CreatedAlertRef,
  EventListSchema,
  EventsQuery,
  EVENTS_LIMIT,
  EVENTS_OFFSET,
  ListAlertsQuery,
  PAGE,
  PAGE_LIMIT,
  UpdateAlertBody,
  eventJson,
} from "./alert-schemas.ts";

const TAGS = ["risk alerts"];

export function alertRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  const webhookRules: WebhookUrlOptions = {
    allowHttp: deps.config.webhookAllowHttp,
    allowedCidrs: deps.config.webhookAllowedCidrs,
  };
  const smsRules = { allowedCountries: deps.config.smsAllowedCountries };
  // Read from the settings the worker reads too (one environment): the API cannot ask a worker.
  const offChannels = channelsOff(deps.config);
  const alertNotFound = (alertId: string) => notFound(`alert ${alertId}`);

  /** What a PATCH refuses to change, and what to do instead: an alert's events and baseline belong to what it watches. */
  const FIXED_ALERT_FIELDS = {
    condition: "cannot change: create a new alert with the condition you want (and delete this one)",
    token: "cannot change: create a new alert with the token you want (and delete this one)",
    windowSeconds: "cannot change: create a new alert with the window you want (and delete this one)",
    ignoreOwnWallets: "cannot change: create a new alert with the setting you want (and delete this one)",
    notificationMethod: "cannot change: create a new alert with the channel you want (and delete this one)",
    walletId: "cannot change: create the alert on the other wallet (and delete this one)",
  };

  const alertCaps = { perWallet: deps.config.maxAlertsPerWallet, perCaller: deps.config.maxAlertsPerCaller };

  /** A create over a cap: a conflict whose `limit` names the cap (problem.ts), and whose detail says what the caller (or the operator) can do. */
  const alertCapReached = (cap: "wallet" | "caller", limit: number, walletId: string) =>
    cap === "wallet"
      ? capReached(
          "MAX_ALERTS_PER_WALLET",
          limit,
          `wallet ${walletId} has ${limit} alerts already, the most one wallet may have (MAX_ALERTS_PER_WALLET=${limit}; paused and disabled alerts count): ` +
            "delete one you no longer need (DELETE /v1/risk/alerts/{alertId}) or change one (PATCH) instead, or ask the operator to raise MAX_ALERTS_PER_WALLET",
        )
      : capReached(
          "MAX_ALERTS_PER_CALLER",
          limit,
          `you have ${limit} alerts already, the most one caller may have (MAX_ALERTS_PER_CALLER=${limit}; paused and disabled alerts count): ` +
            "delete ones you no longer need (DELETE /v1/risk/alerts/{alertId}) or change one (PATCH) instead, or ask the operator to raise MAX_ALERTS_PER_CALLER",
        );

  /** A create under a key already used: the alert it made, as it is now, or a 409 saying why not. */
  const replay = (reply: FastifyReply, key: string, earlier: IdempotentAlert, fingerprint: string) => {
    const location = `/v1/risk/alerts/${earlier.row.alertId}`;
    const verdict = replayVerdict(earlier, fingerprint);
    if (verdict.kind === "different-request") {
      throw new ProblemError("conflict", `Idempotency-Key ${key} was used for a different request (alert ${earlier.row.alertId}); use a new key for a new alert`, { headers: { location } });
    }
    if (verdict.kind === "expired") {
      throw new ProblemError("conflict", `Idempotency-Key ${key} created alert ${earlier.row.alertId} more than a day ago; its answer is not replayed`, { headers: { location } });
    }
    if (verdict.kind === "secret-rotated") {
      // The first answer's secret is gone; the current one is shown only by the rotation that made it.
      throw new ProblemError("conflict", `Idempotency-Key ${key} created alert ${earlier.row.alertId}, whose secret was rotated since; its answer is not replayed`, { headers: { location } });
    }
    reply.code(201).header("location", location).header("idempotent-replayed", "true").header("cache-control", NO_STORE);
    return { ...earlier.row, ...(earlier.webhookSecret ? { webhookSecret: earlier.webhookSecret } : {}) };
  };

  return async (app) => {
    app.post(
      "/risk/alerts",
      {
        config: { scope: "alerts:write" },
        // The body as sent, for the threshold literal JSON.parse rounds (assertExactThreshold).
        preParsing: keepRawBody,
        schema: {
          tags: TAGS,
          summary: "Create a risk alert on a wallet",
          body: CreateAlertBody,
          headers: IdempotencyHeaders,
          response: {
            201: noStore(
              withLocation(CreatedAlertRef, "risk alert created (or, replayed under its Idempotency-Key, the one it made)", "the risk alert's URL", {
                "idempotent-replayed": "true when this answer replays an earlier create under the same Idempotency-Key",
              }),
            ),
            ...errorResponses(400, 404, 413, 415),
            ...CreateConflictResponse,
          },
        },
      },
      async (request, reply) => {
        // Before a key is looked up: the parsed body (and so its fingerprint) is the same for
        // 9999999.999999999 and 9999999.999999998, but a body sent with such a threshold never
        // made an alert, and must not be answered with one made for the rounded value.
        assertExactThreshold(rawBody(request));
        const body = request.body;
        const owner = request.caller.sub;
        const key = request.headers[IDEMPOTENCY_HEADER];
        const fingerprint = requestFingerprint(body);
        // A key already used is answered from what it made, before the body is checked again:
        // a check that depends on the moment (the token's email claim, the webhook host's DNS)
        // could refuse the retry of a create that succeeded, and the client would make another.
        const made = key === undefined ? undefined : await findAlertByIdempotencyKey(deps.sql, owner, key);
        if (made) return replay(reply, key!, made, fingerprint);
        const settings = await checkNewAlert(body, request.caller, webhookRules, smsRules, offChannels);
        const now = deps.now();
        const webhookSecret = body.notificationMethod === "webhook" ? generateWebhookSecret() : null;
        const inserted = await insertAlert(deps.sql, {
          id: newId("alr", now.getTime()),
          owner,
          walletId: body.walletId,
          condition: body.condition,
          notificationMethod: body.notificationMethod,
          webhookSecret,
          ownerEmail: ownerEmailOf(request.caller) ?? null,
          idempotency: key === undefined ? undefined : { key, fingerprint },
          createdAt: now,
          ...settings,
        }, alertCaps);
        if (inserted.kind === "capped") throw alertCapReached(inserted.cap, inserted.limit, body.walletId);
        if (inserted.kind === "created") {
          const { row } = inserted;
          reply.code(201).header("location", `/v1/risk/alerts/${row.alertId}`).header("cache-control", NO_STORE);
          // The only time the secret leaves the service (bar a replay before any rotation): the caller must keep it now.
          return { ...row, ...(webhookSecret ? { webhookSecret } : {}) };
        }
        // Nothing inserted: a request racing under the same key made it first, or no such wallet.
        const raced = key === undefined ? undefined : await findAlertByIdempotencyKey(deps.sql, owner, key);
        if (!raced) throw notFound(`wallet ${body.walletId}`);
        return replay(reply, key!, raced, fingerprint);
      },
    );

    app.get(
      "/risk/alerts",
      {
        config: { scope: "alerts:read" },
        schema: {
          tags: TAGS,
          summary: "List the caller's risk alerts, newest first",
          description:
            "Newest first, by alertId (ids are time-ordered: creation order). Paged by page and limit, or by after: a page number counts from the newest alert, " +
            "so an alert created between two pages repeats one of the page before and an alert deleted between them skips one. " +
            "To read every alert once while others create or delete them, leave page out and set after to the alertId of the last alert received until hasMore is false.",
          querystring: ListAlertsQuery,
          response: { 200: described(AlertListSchema, "the caller's risk alerts, one page"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { walletId, status, after } = request.query;
        const page = parseQueryInteger("page", request.query.page, PAGE);
        if (after !== undefined && !isId("alr", after)) {
          throw invalid("query.after", "must be the alertId of an alert received (alr_ and 26 characters)");
        }
        // The schema's default fills in page=1 when it is left out: only another page is refused.
        if (after !== undefined && page !== PAGE.default) {
          throw invalid("query.page", "must be left out when after is given: after is where the page starts");
        }
        const limit = parseQueryInteger("limit", request.query.limit, PAGE_LIMIT);
        const listed = await listAlerts(deps.sql, request.caller.sub, { walletId, status }, { offset: after === undefined ? (page - 1) * limit : 0, limit, after });
        const { rows, total, hasMore } = listed;
        // A walletId that names none of the caller's wallets is a 404, as on /v1/transactions:
        // answered with an empty list, a mistyped id read as "this wallet has no alerts".
        if (total === 0 && walletId !== undefined && !(await findWalletAddress(deps.sql, request.caller.sub, walletId))) {
          throw notFound(`wallet ${walletId}`);
        }
        return { alerts: rows, total, ...(after === undefined ? { page } : {}), limit, hasMore };
      },
    );

    app.get(
      "/risk/alerts/:alertId",
      {
        config: { scope: "alerts:read" },
        schema: {
          tags: TAGS,
          summary: "Get a risk alert",
          params: AlertIdParams,
          response: { 200: withEntityTag(described(AlertRef, "the risk alert")), ...errorResponses(400, 404) },
        },
      },
      async (request, reply) => {
        const row = await findAlert(deps.sql, request.caller.sub, request.params.alertId);
        if (!row) throw alertNotFound(request.params.alertId);
        reply.header("etag", entityTagOf(row));
        return row;
      },
    );

    app.patch(
      "/risk/alerts/:alertId",
      {
        config: { scope: "alerts:write", fixedFields: FIXED_ALERT_FIELDS },
        preParsing: keepRawBody,
        schema: {
          tags: TAGS,
          summary: "Change a risk alert: pause or resume it, or change its threshold, cooldown or destination",
          description:
            "Without If-Match the last write wins: to change an alert only if nobody changed it since you read it (the service too: it disables a failing alert), " +
            "send the ETag of that read in If-Match, and on a 412 read again and retry.",
          params: AlertIdParams,
          headers: IfMatchHeaders,
          body: UpdateAlertBody,
          response: {
            200: withEntityTag(described(AlertRef, "the risk alert as this request changed it")),
            ...errorResponses(400, 404, 413, 415),
            ...PreconditionFailedResponse,
          },
        },
      },
      async (request, reply) => {
        // A problem of the body as sent, like the schema's: answered before the alert is looked up.
        assertExactThreshold(rawBody(request));
        const { alertId } = request.params;
        const ifMatch = ifMatchOf(request.headers["if-match"]);
        // Read for the checks of the changes, which depend only on what a PATCH cannot change
        // (its condition and channel); the If-Match is judged on the row the update locks.
        const current = await findAlert(deps.sql, request.caller.sub, alertId);
        if (!current) throw alertNotFound(alertId);
        const changes = await checkAlertChanges(request.body, current, webhookRules, smsRules, offChannels);
        // A token without a usable email claim keeps the address stored before.
        const ownerEmail = ownerEmailOf(request.caller);
        const outcome = await updateAlert(deps.sql, request.caller.sub, alertId, { ...changes, ...(ownerEmail ? { ownerEmail } : {}) }, deps.now(), ifMatch);
        if (outcome.kind === "not-found") throw alertNotFound(alertId);
        if (outcome.kind === "precondition-failed") throw preconditionFailed(`alert ${alertId}`);
        reply.header("etag", entityTagOf(outcome.row));
        return outcome.row;
      },
    );

    app.delete(
      "/risk/alerts/:alertId",
      {
        config: { scope: "alerts:write" },
        schema: {
          tags: TAGS,
          summary: "Delete a risk alert with its events and notifications",
          params: AlertIdParams,
          headers: IfMatchHeaders,
          // A DELETE may carry a body, and the body parser judges it before the route: 413, 415.
          response: { 204: { type: "null", description: "deleted" }, ...errorResponses(400, 404, 413, 415), ...PreconditionFailedResponse },
        },
      },
      async (request, reply) => {
        assertNoBody(request.body);
        const { alertId } = request.params;
        const ifMatch = ifMatchOf(request.headers["if-match"]);
        // The caller is both the owner the delete is scoped to and who the archive says deleted it.
        const outcome = await deleteAlert(deps.sql, request.caller.sub, alertId, request.caller.sub, ifMatch);
        if (outcome.kind === "not-found") throw alertNotFound(alertId);
        if (outcome.kind === "precondition-failed") throw preconditionFailed(`alert ${alertId}`);
        return reply.code(204).send(null);
      },
    );

    app.get(
      "/risk/alerts/:alertId/events",
      {
        config: { scope: "alerts:read" },
        schema: {
          tags: TAGS,
          summary: "What a risk alert fired and why, newest first, with the notification each firing produced",
          description:
            "Newest first (createdAt descending, then eventId ascending). Paged by limit and offset (offset at most 100,000), or from after, the eventId of the last event received, " +
            "which goes on to older events (offset then counts from it). Events recorded while you page push offset pages down (a page repeats entries of the one before); " +
            "pages read with after do not move, so page with it while the alert fires, until hasMore is false. " +
            "since and until select a period by createdAt (at or after since, before until; total counts the period), for an export of one period. " +
            "Each event keeps the settings it was judged by (judgedSettings) and the wallet's risk score and factors with it.",
          params: AlertIdParams,
          querystring: EventsQuery,
          response: { 200: described(EventListSchema, "what the alert fired, newest first, one page"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { alertId } = request.params;
        const limit = parseQueryInteger("limit", request.query.limit, EVENTS_LIMIT);
        const offset = parseQueryInteger("offset", request.query.offset, EVENTS_OFFSET);
        const window = eventWindow(request.query);
        if (!(await findAlert(deps.sql, request.caller.sub, alertId))) throw alertNotFound(alertId);
        const { after } = request.query;
        const page = await listAlertEvents(deps.sql, alertId, { offset, limit, after }, window);
        if (!page) throw invalid("query.after", `must be the eventId of an event of alert ${alertId}`);
        return { events: page.rows.map(eventJson), total: page.total, hasMore: page.hasMore };
      },
    );
  };
}
