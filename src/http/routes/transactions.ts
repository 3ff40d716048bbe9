// A wallet's transaction history (interface 4.3): newest first, filtered by type and time.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";
import { listAddressTransactions } from "../../db/queries/transactions.ts";
import { findWalletAddress } from "../../db/queries/wallets.ts";
import { SIGNATURE_PATTERN } from "../../domain/base58.ts";
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from "../../domain/types.ts";
import { MAX_UNIX_SECONDS } from "../../ingest/native.ts";
import { invalid, notFound } from "../problem.ts";
import { assertSignature, described, documentAsInteger, errorResponses, idSchema, parseQueryInteger, queryInteger, refTo } from "../schemas.ts";

const LIMIT = { min: 1, max: 500, default: 50 };
/**
 * DESIGN.md section 3 bounds offset (a deep offset costs the database every row it skips), yet
 * hasMore can be true at the bound. The way on is a narrower window: the order is newest first,
 * so endTime at the last blockTime received starts the list where the client stopped, and
 * offset skips the entries at that blockTime it already has (endTime is inclusive).
 */
const OFFSET = {
  min: 0,
  max: 100_000,
  default: 0,
  pastMax:
    "to read further, set endTime to the blockTime of the last transaction received and offset to how many of the transactions received have that blockTime (endTime is inclusive), then page on from there",
};
/** Unix seconds: queryInteger's nine digits end in 2001, so the time bounds have their own pattern. */
const TIME = { min: 0, max: MAX_UNIX_SECONDS, default: 0 };

const queryTime = (description: string) =>
  documentAsInteger(
    Type.Optional(
      Type.String({
        pattern: "^(0|[1-9][0-9]{0,11})$",
        description: `${description}: Unix seconds, inclusive, a whole number from 0 to ${MAX_UNIX_SECONDS}`,
      }),
    ),
    { min: TIME.min, max: TIME.max },
  );

const QuerySchema = Type.Object(
  {
    walletId: idSchema("wal", "wallet"),
    limit: queryInteger({ ...LIMIT, description: "number of transactions to return" }),
    offset: queryInteger({ ...OFFSET, description: "number of transactions to skip" }),
    type: Type.Optional(
      Type.Enum(["all", ...TRANSACTION_TYPES], { description: "filter by type; all (or absent) means no filter; other is an extension" }),
    ),
    startTime: queryTime("oldest blockTime returned"),
    endTime: queryTime("newest blockTime returned"),
    signature: Type.Optional(
      Type.String({
        pattern: SIGNATURE_PATTERN,
        description:
          // Opens with what the value is: a pattern failure's message is "must be " + this.
          "a transaction signature (base58 of 64 bytes), such as an event's transactionSignature (extension): only the movements of that transaction; none when it is not the wallet's",
      }),
    ),
  },
  { additionalProperties: false },
);

// A named schema: components.schemas in the OpenAPI document, a $ref where a route uses it (refTo, schema-components.ts).
export const TransactionSchema = Type.Object(
  {
    signature: Type.String({ description: "shared by the movements of one chain transaction, each listed on its own" }),
    type: Type.Enum(TRANSACTION_TYPES),
    amount: Type.Number({ description: "UI units of token" }),
    token: Type.String({ description: "a symbol, or the mint when there is none" }),
    mint: Type.Union([Type.String(), Type.Null()], {
      description: "the token's mint (null for native SOL, or when the feed gave none): a symbol alone can be anyone's token",
    }),
    from: Type.String(),
    to: Type.String(),
    blockTime: Type.Integer({ description: "Unix seconds" }),
    slot: Type.Integer(),
    fee: Type.Number({ description: "SOL" }),
    status: Type.Enum(TRANSACTION_STATUSES),
  },
  { $id: "Transaction", description: "one movement of a chain transaction on the wallet, as GET /v1/transactions lists it" },
);

const ResponseSchema = Type.Object({
  transactions: Type.Array(refTo(TransactionSchema), {
    description: "newest first: blockTime desc, slot desc, signature, then a transaction's principal movement first",
  }),
  total: Type.Integer({ description: "count of matching movements" }),
  hasMore: Type.Boolean({ description: "true when more results exist beyond this page" }),
});

export function transactionRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/transactions",
      {
        config: { scope: "transactions:read" },
        schema: {
          tags: ["transactions"],
          summary: "Get a wallet's transactions",
          description:
            "Newest first: blockTime descending, then slot descending, then signature (byte order), then a transaction's movements with its principal one first. " +
            "Paged by limit and offset (offset at most 100,000); offset pages count from the newest entry, so entries ingested between two pages repeat some of the page before. " +
            "To read past that depth, or while ingest runs, keep the other parameters, set endTime to the blockTime of the last entry received and offset to how many " +
            "of the entries received have that blockTime (endTime is inclusive), and page on until hasMore is false. " +
            "signature (an extension) selects one transaction's movements on the wallet, such as the one an event names: none when that transaction is not the wallet's.",
          querystring: QuerySchema,
          response: { 200: described(ResponseSchema, "the wallet's transactions, newest first, one page"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { query } = request;
        const limit = parseQueryInteger("limit", query.limit, LIMIT);
        const offset = parseQueryInteger("offset", query.offset, OFFSET);
        const startTime = query.startTime === undefined ? undefined : parseQueryInteger("startTime", query.startTime, TIME);
        const endTime = query.endTime === undefined ? undefined : parseQueryInteger("endTime", query.endTime, TIME);
        if (startTime !== undefined && endTime !== undefined && startTime > endTime) {
          throw invalid("query.startTime", "must not be after endTime");
        }
        if (query.signature !== undefined) assertSignature("query.signature", query.signature);
        const address = await findWalletAddress(deps.sql, request.caller.sub, query.walletId);
        if (!address) throw notFound(`wallet ${query.walletId}`);
        const type = query.type === "all" ? undefined : query.type;
        const { rows, total } = await listAddressTransactions(
          deps.sql,
          { address, type, startTime, endTime, signature: query.signature },
          { offset, limit },
        );
        return { transactions: rows, total, hasMore: offset + rows.length < total };
      },
    );
  };
}
