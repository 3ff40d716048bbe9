// Every /v1 route family, each in its own file with its schemas.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";
import { applyIngestAdmission } from "../ingest-admission.ts";
import type { ReadCache } from "../read-cache.ts";
import { alertHistoryRoutes } from "./alert-history.ts";
import { alertNotificationRoutes } from "./alert-notifications.ts";
import { alertRoutes } from "./alerts.ts";
import { heliusRoutes } from "./helius.ts";
import { ingestRoutes } from "./ingest.ts";
import { labelHistoryRoutes } from "./label-history.ts";
import { notificationRoutes } from "./notifications.ts";
import { redeliverRoutes } from "./redeliver.ts";
import { riskLabelRoutes } from "./risk-labels.ts";
import { transactionRoutes } from "./transactions.ts";
import { twilioStatusCallbackRoutes } from "./twilio-status-callback.ts";
import { walletEventRoutes } from "./wallet-events.ts";
import { walletRoutes } from "./wallets.ts";

export function v1Routes(deps: Deps, readCache: ReadCache): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Before any route: it wraps the ingest writes' handlers as they are added.
    applyIngestAdmission(app, deps.ingestAdmission);
    await app.register(walletRoutes(deps, readCache));
    await app.register(walletEventRoutes(deps));
    await app.register(transactionRoutes(deps));
    await app.register(alertRoutes(deps));
    await app.register(ingestRoutes(deps));
    await app.register(notificationRoutes(deps));
    await app.register(alertNotificationRoutes(deps));
    await app.register(alertHistoryRoutes(deps));
    await app.register(redeliverRoutes(deps));
    await app.register(heliusRoutes(deps));
    await app.register(riskLabelRoutes(deps));
    await app.register(labelHistoryRoutes(deps));
    await app.register(twilioStatusCallbackRoutes(deps));
  };
}
