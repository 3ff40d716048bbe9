// The named schemas of the API: each has an $id, app.ts registers them all with app.addSchema,
// and routes use them through refTo (schemas.ts). The OpenAPI document shows each once, under
// components.schemas by its $id (app.ts's buildLocalReference), and every use as a $ref to it,
// so that a client generated from the document has a type of that name (WalletDetail, not
// GetWallet200Response). Fastify's serializer resolves each $ref to the schema itself: answers
// are shaped as they were with the schemas inline.
import type { TSchema } from "@fastify/type-provider-typebox";
import { AlertChangeSchema } from "./routes/alert-history.ts";
import { AlertEventSchema, AlertSchema, CreatedAlertSchema } from "./routes/alert-schemas.ts";
import { NotificationSchema, NotificationSummarySchema } from "./routes/notification-schemas.ts";
import { TransactionSchema } from "./routes/transactions.ts";
import { WalletEventSchema } from "./routes/wallet-events.ts";
import { WalletDetailSchema, WalletSummarySchema } from "./routes/wallets.ts";
import { ProblemSchema } from "./schemas.ts";

/** Each schema, checked to have the $id it is named by. */
const named = (...schemas: TSchema[]): ReadonlyArray<TSchema & { $id: string }> =>
  schemas.map((schema) => {
    if (typeof (schema as { $id?: unknown }).$id !== "string") throw new Error("a named schema needs an $id");
    return schema as TSchema & { $id: string };
  });

/** In the order components.schemas lists them. */
export const NAMED_SCHEMAS = named(
  ProblemSchema,
  WalletSummarySchema,
  WalletDetailSchema,
  TransactionSchema,
  AlertSchema,
  CreatedAlertSchema,
  AlertEventSchema,
  AlertChangeSchema,
  WalletEventSchema,
  NotificationSchema,
  NotificationSummarySchema,
);
