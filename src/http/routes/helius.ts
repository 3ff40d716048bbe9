// POST /v1/ingest/helius — Helius enhanced-transaction webhooks, fed into the same path as
// POST /v1/ingest/transactions. Helius cannot send a JWT: it echoes the authHeader set on the
// webhook in `Authorization`, which we compare with HELIUS_AUTH_HEADER in constant time.
//
// This is the one endpoint lenient on unknown fields: Helius items carry many fields we do
// not read (accountData, instructions, events, description, …) and adds new ones over time,
// so unknown fields are ignored here, inside the items and their transfers. The fields we
// read are typed strictly all the same.
import { createHash, timingSafeEqual } from "node:crypto";
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";
import { heliusAddressIssues, mapHeliusWebhook, type HeliusTransaction } from "../../ingest/helius.ts";
import { MAX_AMOUNT, MAX_BATCH_TRANSACTIONS, MAX_UNIX_SECONDS } from "../../ingest/native.ts";
import { storeTransactionBatch } from "../../ingest/store.ts";
import { INGEST_BODY_LIMIT } from "../app.ts";
import { ProblemError } from "../problem.ts";
import { AddressSchema, SignatureSchema, problemResponses } from "../schemas.ts";

/**
 * Lamports are a u64 on chain. Capping them at 2^53 refused a whole delivery for one transfer
 * of 9,007,199 SOL or more (whales, stake pools): beyond 2^53 a JSON number may be off by a few
 * lamports, a billionth of a SOL, which is nothing next to refusing it.
 */
const MAX_LAMPORTS = 2 ** 64 - 1;

const Lamports = (description: string) =>
  Type.Integer({ minimum: 0, maximum: MAX_LAMPORTS, description: `${description} (lamports)` });

// Helius writes an absent side (a mint, a burn) as "" or null.
const UserAccount = Type.Unsafe<string | null>({
  type: ["string", "null"],
  pattern: "^([1-9A-HJ-NP-Za-km-z]{32,44})?$",
  description: "a Solana address, or empty/null when the transfer has no such side",
});

const NativeTransferSchema = Type.Object(
  { fromUserAccount: UserAccount, toUserAccount: UserAccount, amount: Lamports("amount") },
  { additionalProperties: true },
);

const TokenTransferSchema = Type.Object(
  {
    fromUserAccount: UserAccount,
    toUserAccount: UserAccount,
    mint: AddressSchema,
    tokenAmount: Type.Number({ minimum: 0, maximum: MAX_AMOUNT, description: "UI units (decimals applied)" }),
  },
  { additionalProperties: true },
);

// Each transfer becomes a row (its leg, a smallint); a Solana transaction's compute budget
// allows a few hundred transfers at most, so more than this is not a real chain transaction.
const MAX_TRANSFERS_PER_ITEM = 1_000;

const HeliusItemSchema = Type.Object(
  {
    signature: SignatureSchema,
    slot: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    timestamp: Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS, description: "Unix seconds" }),
    fee: Lamports("fee"),
    feePayer: AddressSchema,
    type: Type.String({ maxLength: 64, description: "Helius transaction type (TRANSFER, SWAP, NFT_SALE, …)" }),
    transactionError: Type.Optional(Type.Unknown({ description: "null when the transaction succeeded" })),
    nativeTransfers: Type.Optional(Type.Union([Type.Array(NativeTransferSchema, { maxItems: MAX_TRANSFERS_PER_ITEM }), Type.Null()])),
    tokenTransfers: Type.Optional(Type.Union([Type.Array(TokenTransferSchema, { maxItems: MAX_TRANSFERS_PER_ITEM }), Type.Null()])),
  },
  { additionalProperties: true, description: "a Helius enhanced transaction; fields not listed here are ignored" },
);

const BodySchema = Type.Array(HeliusItemSchema, { minItems: 1, maxItems: MAX_BATCH_TRANSACTIONS });

const AcceptedSchema = Type.Object({
  accepted: Type.Integer({ description: "transactions stored by this call" }),
  duplicates: Type.Integer({ description: "items already stored (Helius retries and replays)" }),
  skipped: Type.Integer({ description: "items repeating a signature earlier in this same delivery" }),
});

/** Equal-length digests, so neither the content nor the length of the secret leaks by timing. */
function sameSecret(given: string | undefined, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return given !== undefined && timingSafeEqual(digest(given), digest(expected));
}

export function heliusRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/ingest/helius",
      {
        bodyLimit: INGEST_BODY_LIMIT,
        config: { public: true },
        // Before the body is parsed: a caller without the secret learns nothing about its body.
        onRequest: async (request) => {
          const expected = deps.config.heliusAuthHeader;
          if (!expected) {
            throw new ProblemError("not_found", "the Helius webhook is not enabled here (HELIUS_AUTH_HEADER is not set)");
          }
          if (!sameSecret(request.headers.authorization, expected)) {
            throw new ProblemError("unauthorized", "the Authorization header does not match the webhook's auth header", {
              headers: { "www-authenticate": 'HeliusAuthHeader realm="wallet-alerts"' },
            });
          }
        },
        schema: {
          tags: ["ingest"],
          summary: "Ingest a Helius enhanced-transaction webhook delivery (idempotent by signature)",
          description:
            "Authenticated by the webhook's auth header (`Authorization` equal to HELIUS_AUTH_HEADER), not by a JWT. " +
            "Unknown fields inside the items are ignored; the fields listed are typed strictly.",
          security: [],
          body: BodySchema,
          response: {
            202: AcceptedSchema,
            ...problemResponses(400, 401, 404, 413, 415, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const items = request.body as HeliusTransaction[];
        const errors = heliusAddressIssues(items);
        if (errors.length > 0) {
          throw new ProblemError("validation_failed", errors.map((e) => `${e.path} ${e.message}`).join("; "), { errors });
        }
        const { transactions, skipped } = mapHeliusWebhook(items);
        const { accepted, duplicates } = await storeTransactionBatch(deps, transactions);
        return reply.code(202).send({ accepted, duplicates, skipped });
      },
    );
  };
}
