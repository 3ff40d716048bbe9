// GET /v1/risk/alerts/{alertId}/notifications: every notification an alert made (firings, tests,
// cooldown digests), oldest first, with a cursor a poller resumes from. A receiver that was down,
// or lost its dedupe store, lists here what it may have missed; the events list cannot say,
// since tests and digests have no event. Scoped by the caller: another caller's alert is a 404.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { findAlert } from "../../db/queries/alerts.ts";
import { listAlertNotifications } from "../../db/queries/notification-list.ts";
import type { Deps } from "../../deps.ts";
import { invalid, notFound } from "../problem.ts";
import { described, errorResponses, parseQueryInteger } from "../schemas.ts";
import { AlertIdParams } from "./alert-schemas.ts";
import { NOTIFICATIONS_LIMIT, NotificationListQuery, NotificationListSchema, summaryJson } from "./notification-schemas.ts";

const DESCRIPTION =
  "Every notification of the alert: its firings' (risk_alert.triggered), its tests' (risk_alert.test) and its cooldown digests' " +
  "(risk_alert.suppressed), oldest first, in the order they were committed (which may differ from the order of their ids or " +
  "createdAt by moments). To read on, or to poll for new ones, send after= the notificationId of the last notification received: " +
  "a notification committed later is always listed after every one listed before it, so a poller that resumes from its last id " +
  "misses none and repeats none. hasMore false: nothing more for now; ask again later with the same after. The filters select " +
  "within that order (after may name a notification they leave out). An after that is no notification of this alert is a 400.";

export function alertNotificationRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/risk/alerts/:alertId/notifications",
      {
        config: { scope: "alerts:read" },
        schema: {
          tags: ["notifications"],
          summary: "An alert's notifications, oldest first, with a cursor to resume from: what a receiver that missed webhooks reconciles against",
          description: DESCRIPTION,
          params: AlertIdParams,
          querystring: NotificationListQuery,
          response: { 200: described(NotificationListSchema, "the alert's notifications, oldest first, one page"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { alertId } = request.params;
        const { after, status, type } = request.query;
        const limit = parseQueryInteger("limit", request.query.limit, NOTIFICATIONS_LIMIT);
        if (!(await findAlert(deps.sql, request.caller.sub, alertId))) throw notFound(`alert ${alertId}`);
        const page = await listAlertNotifications(deps.sql, alertId, { limit, after, status, type });
        if (!page) throw invalid("query.after", `must be the notificationId of a notification of alert ${alertId}`);
        return { notifications: page.rows.map(summaryJson), hasMore: page.hasMore };
      },
    );
  };
}
