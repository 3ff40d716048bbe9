// The shapes of POST /v1/ingest/helius. The body is checked in two steps: Fastify checks the
// delivery (an array of objects, within the size limits), then the route checks each item
// against HeliusItemSchema on its own, so that one item we cannot read refuses that item and
// not the delivery (see helius.ts).
//
// Lenient on unknown fields: Helius items carry many fields we do not read (accountData,
// instructions, description, most of events, …) and adds new ones over time, so unknown
// fields are ignored here, inside the items, their transfers and their events. The fields we
// read are typed strictly all the same.
import { Type, type Static, type TSchema } from "@fastify/type-provider-typebox";
import { MAX_BLOCK_TIME_AHEAD_SECONDS, SOLANA_GENESIS_SECONDS } from "../../ingest/block-time.ts";
import { MAX_AMOUNT, MAX_BATCH_TRANSACTIONS, MAX_UNIX_SECONDS } from "../../ingest/native.ts";
import { AddressSchema, SignatureSchema } from "../schemas.ts";

/**
 * Lamports are a u64 on chain, and whales and stake pools move 9,007,199 SOL (2^53 lamports) and
 * more. The schema takes any of them; what a double would round is refused by the route, for
 * that item only (heliusItemAmountIssues): a literal a double does not hold (10000000000000001
 * reads as 10000000000000000), and an amount whose SOL value it does not (9000000000000001
 * lamports, 9000000.000000001 SOL, would be judged as 9000000.000000002).
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

// Typed as UserAccount so that an empty side gets the route's own message, which says why it
// refuses the item (heliusItemAddressIssues): a native transfer has no mint to stand in for it.
const NativeSide = Type.Unsafe<string | null>({
  ...UserAccount,
  description: "a Solana address; an empty or null side refuses the item (a native transfer always has two sides)",
});

const NativeTransferSchema = Type.Object(
  { fromUserAccount: NativeSide, toUserAccount: NativeSide, amount: Lamports("amount") },
  { additionalProperties: true },
);

// Helius's SDK types tokenAmount as `number | string`. A string is taken when it is a plain
// decimal (digits, an optional fraction): at most 28 integer digits keeps it under MAX_AMOUNT,
// which a pattern can say and a range cannot. Written as if/then/else, not as a union: a bad
// value then gets its branch's one error (plus the `if` summary, which the route drops), not
// one error per branch; and the app's ajv (strict types) warns on a two-type `type`.
const TokenAmount = Type.Unsafe<number | string>({
  if: { type: "string" },
  then: {
    type: "string",
    pattern: "^[0-9]{1,28}(\\.[0-9]{1,64})?$",
    description: "a decimal number written as a string (digits, an optional fraction)",
  },
  else: { type: "number", minimum: 0, maximum: MAX_AMOUNT },
  description: "UI units (decimals applied): a number, or a decimal string",
});

const TokenTransferSchema = Type.Object(
  { fromUserAccount: UserAccount, toUserAccount: UserAccount, mint: AddressSchema, tokenAmount: TokenAmount },
  { additionalProperties: true },
);

// Each transfer becomes a row (its leg, a smallint); a Solana transaction's compute budget
// allows a few hundred transfers at most, so more than this is not a real chain transaction.
const MAX_TRANSFERS_PER_ITEM = 1_000;

// Of two types rather than a union with null, for one error per problem (see TokenAmount).
const listOf = <T extends TSchema>(schema: T) =>
  Type.Optional(Type.Unsafe<Array<Static<T>> | null>({ type: ["array", "null"], items: schema, maxItems: MAX_TRANSFERS_PER_ITEM }));

/** helius-sdk's CompressedNftEvent; an absent owner is "" or null (a mint has no old one, a burn no new one). */
const CompressedNftEventSchema = Type.Object(
  {
    treeId: AddressSchema,
    assetId: AddressSchema,
    oldLeafOwner: Type.Optional(UserAccount),
    newLeafOwner: Type.Optional(UserAccount),
  },
  { additionalProperties: true, description: "a compressed NFT changing leaf owner (minted, transferred, burned)" },
);

// An object, or null; or `[]`, which Helius's webhooks send for an item with no events (real
// deliveries: test/fixtures/helius/published). Refused for that, such an item (a plain SOL
// transfer, a wrapped-SOL swap) was never stored. A non-empty array is refused: no published
// delivery shows one, and what it would hold (compressed NFTs?) would be lost unread; refused, it
// is kept for an operator. Written as if/then/else for the reasons TokenAmount is (the object's
// fields in `else`, where helius-repeated-keys.ts looks for them).
const EventsSchema = Type.Unsafe<{ compressed?: Array<Static<typeof CompressedNftEventSchema>> | null } | [] | null>({
  if: { type: "array" },
  then: { type: "array", maxItems: 0 },
  else: { type: ["object", "null"], properties: { compressed: listOf(CompressedNftEventSchema) }, additionalProperties: true },
  description: "Helius's parsed events, or [] for none; only `compressed` is read",
});

export const HeliusItemSchema = Type.Object(
  {
    signature: SignatureSchema,
    slot: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    timestamp: Type.Integer({
      minimum: SOLANA_GENESIS_SECONDS,
      maximum: MAX_UNIX_SECONDS,
      description: `the block time, Unix seconds: not before Solana's first block (2020-03-16), nor more than ${MAX_BLOCK_TIME_AHEAD_SECONDS / 60} minutes ahead of the server's clock`,
    }),
    fee: Lamports("fee"),
    feePayer: AddressSchema,
    type: Type.String({ maxLength: 64, description: "Helius transaction type (TRANSFER, SWAP, NFT_SALE, …)" }),
    transactionError: Type.Optional(Type.Unknown({ description: "null when the transaction succeeded" })),
    nativeTransfers: listOf(NativeTransferSchema),
    tokenTransfers: listOf(TokenTransferSchema),
    events: Type.Optional(EventsSchema),
  },
  { additionalProperties: true, description: "a Helius enhanced transaction; fields not listed here are ignored" },
);

export const DeliverySchema = Type.Array(
  Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        "a Helius enhanced transaction, checked on its own: signature, slot, timestamp, fee, feePayer, type, " +
        "and optional transactionError, nativeTransfers, tokenTransfers, events.compressed (README, Helius enhanced " +
        "webhooks). An item that does not pass is listed in `rejected` and kept for an operator; the others are stored.",
    },
  ),
  { minItems: 1, maxItems: MAX_BATCH_TRANSACTIONS },
);

const FieldErrorSchema = Type.Object({ path: Type.String(), message: Type.String() });

const RejectedItemSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: "the item's position in the delivery, from 0" }),
  signature: Type.Optional(Type.String({ description: "the item's signature, when it has a readable one" })),
  errors: Type.Array(FieldErrorSchema, { description: "what is wrong with it, paths as in a 400 (`body.3.fee`)" }),
});

export const AcceptedSchema = Type.Object({
  accepted: Type.Integer({ description: "items stored by this call" }),
  duplicates: Type.Integer({ description: "items already stored (Helius retries and replays)" }),
  skipped: Type.Integer({ description: "items repeating a signature earlier in this same delivery" }),
  rejected: Type.Array(RejectedItemSchema, {
    description: "items refused, each kept whole in helius_rejected_items for an operator; the others were stored",
  }),
});
