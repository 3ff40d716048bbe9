// Native ingest: transactions and account snapshots from a chain source (DESIGN.md section 3).
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";
import {
  ACCOUNT_NUMBERS,
  IngestAccountsBodySchema,
  IngestTransactionsBodySchema,
  TRANSACTION_NUMBERS,
  assertExactNumbers,
  normaliseAccounts,
  normaliseTransactions,
} from "../../ingest/native.ts";
import { storeAccountSnapshots, storeTransactionBatch } from "../../ingest/store.ts";
import { INGEST_BODY_LIMIT } from "../app.ts";
import { keepRawBody, rawBody } from "../raw-body.ts";
import { described, errorResponses } from "../schemas.ts";

const TransactionsAcceptedSchema = Type.Object({
  accepted: Type.Integer({ description: "transactions stored by this call" }),
  duplicates: Type.Integer({
    description: "items that stored nothing: already stored, or a repeat of a signature earlier in the batch",
  }),
});

const AccountsAcceptedSchema = Type.Object({
  accepted: Type.Integer({ description: "addresses whose snapshot was replaced" }),
});

export function ingestRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ["ingest"];

    app.post(
      "/ingest/transactions",
      {
        bodyLimit: INGEST_BODY_LIMIT,
        config: { scope: "ingest:write" },
        // The body as sent, for the amounts and fees JSON.parse rounds (assertExactNumbers).
        preParsing: keepRawBody,
        schema: {
          tags,
          summary: "Ingest a batch of transactions (idempotent by signature)",
          body: IngestTransactionsBodySchema,
          response: { 202: described(TransactionsAcceptedSchema, "the batch stored (or already stored) and queued for evaluation"), ...errorResponses(400, 413, 415) },
        },
      },
      async (request, reply) => {
        assertExactNumbers(rawBody(request), TRANSACTION_NUMBERS);
        const txs = normaliseTransactions(request.body.transactions, deps.now());
        const { accepted, duplicates } = await storeTransactionBatch(deps, txs);
        return reply.code(202).send({ accepted, duplicates });
      },
    );

    app.post(
      "/ingest/accounts",
      {
        bodyLimit: INGEST_BODY_LIMIT,
        config: { scope: "ingest:write" },
        preParsing: keepRawBody,
        schema: {
          tags,
          summary: "Ingest account snapshots (balance, token accounts, NFTs); each replaces the address's previous one",
          body: IngestAccountsBodySchema,
          response: { 202: described(AccountsAcceptedSchema, "the snapshots stored"), ...errorResponses(400, 413, 415) },
        },
      },
      async (request, reply) => {
        assertExactNumbers(rawBody(request), ACCOUNT_NUMBERS);
        const accepted = await storeAccountSnapshots(deps, normaliseAccounts(request.body.accounts));
        return reply.code(202).send({ accepted });
      },
    );
  };
}
