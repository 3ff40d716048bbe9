// The native ingest formats (POST /v1/ingest/transactions and /v1/ingest/accounts): their
// JSON schemas and the checks a schema cannot make (exact base58 lengths, duplicates, numbers
// sent with more digits than JSON parsing keeps).
// The numeric maxima keep every value inside its Postgres `numeric` column, so an absurd
// amount is a 400 here rather than an overflow in the database.
import { Type, type Static } from "@fastify/type-provider-typebox";
import { isAddress } from "../domain/base58.ts";
import { isWellKnownSymbol } from "../domain/tokens.ts";
import { TRANSACTION_STATUSES, TRANSACTION_TYPES, type Transaction } from "../domain/types.ts";
import { AddressSchema, SignatureSchema, assertAddress, assertSignature, textSchema } from "../http/schemas.ts";
import { ProblemError, invalid, type FieldError } from "../http/problem.ts";
import { MAX_BLOCK_TIME_AHEAD_SECONDS, SOLANA_GENESIS_SECONDS, blockTimeAheadIssue } from "./block-time.ts";
import { INEXACT_NUMBER_MESSAGE, inexactNumberLiterals, numberPaths, type NumberPaths } from "./exact-token-amounts.ts";

export const MAX_BATCH_TRANSACTIONS = 1000;
export const MAX_BATCH_ACCOUNTS = 1000;
export const MAX_ACCOUNT_ITEMS = 10_000;
// Upper bounds far beyond any real amount, fee or value (the columns, unconstrained numeric
// since 0011, would take more): what passes them is a feed's mistake, refused with its path.
export const MAX_AMOUNT = 1e28;
export const MAX_FEE = 1e10;
export const MAX_USD = 1e17;
/** 9999-12-31T23:59:59Z: any later second cannot be written as an ISO 8601 date-time. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

export const IngestTransactionSchema = Type.Object(
  {
    signature: SignatureSchema,
    type: Type.Enum(TRANSACTION_TYPES),
    amount: Type.Number({ minimum: 0, maximum: MAX_AMOUNT, description: "UI units of `token`" }),
    token: textSchema({ minLength: 1, maxLength: 64, description: "a symbol, or the mint when there is none" }),
    mint: Type.Optional(Type.Union([AddressSchema, Type.Null()])),
    from: AddressSchema,
    to: AddressSchema,
    blockTime: Type.Integer({
      minimum: SOLANA_GENESIS_SECONDS,
      maximum: MAX_UNIX_SECONDS,
      description: `Unix seconds: not before Solana's first block (2020-03-16), nor more than ${MAX_BLOCK_TIME_AHEAD_SECONDS / 60} minutes ahead of the server's clock`,
    }),
    slot: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    fee: Type.Number({ minimum: 0, maximum: MAX_FEE, description: "SOL" }),
    status: Type.Enum(TRANSACTION_STATUSES),
  },
  { additionalProperties: false },
);

export const IngestTransactionsBodySchema = Type.Object(
  { transactions: Type.Array(IngestTransactionSchema, { minItems: 1, maxItems: MAX_BATCH_TRANSACTIONS }) },
  { additionalProperties: false },
);

export const TokenAccountSnapshotSchema = Type.Object(
  {
    mint: AddressSchema,
    symbol: textSchema({ maxLength: 32, description: "empty when the token has no symbol" }),
    balance: Type.Number({ minimum: 0, maximum: MAX_AMOUNT, description: "UI units (decimals applied)" }),
    usdValue: Type.Number({ minimum: 0, maximum: MAX_USD, description: "USD" }),
  },
  { additionalProperties: false },
);

export const NftSnapshotSchema = Type.Object(
  {
    mint: AddressSchema,
    name: textSchema({ maxLength: 200 }),
    collection: textSchema({ maxLength: 200 }),
    floorPrice: Type.Number({ minimum: 0, maximum: MAX_USD, description: "USD" }),
  },
  { additionalProperties: false },
);

export const AccountSnapshotSchema = Type.Object(
  {
    address: AddressSchema,
    balance: Type.Number({ minimum: 0, maximum: MAX_AMOUNT, description: "SOL" }),
    tokenAccounts: Type.Array(TokenAccountSnapshotSchema, { maxItems: MAX_ACCOUNT_ITEMS }),
    nfts: Type.Array(NftSnapshotSchema, { maxItems: MAX_ACCOUNT_ITEMS }),
  },
  { additionalProperties: false },
);

export const IngestAccountsBodySchema = Type.Object(
  { accounts: Type.Array(AccountSnapshotSchema, { minItems: 1, maxItems: MAX_BATCH_ACCOUNTS }) },
  { additionalProperties: false },
);

export type AccountSnapshot = Static<typeof AccountSnapshotSchema>;

/** Checks what the schema could not: the decoded length of every base58 value, and block times against the clock. */
export function normaliseTransactions(items: readonly Static<typeof IngestTransactionSchema>[], now: Date): Transaction[] {
  return items.map((item, i) => {
    const path = `body.transactions.${i}`;
    const ahead = blockTimeAheadIssue(item.blockTime, now);
    if (ahead) throw invalid(`${path}.blockTime`, ahead);
    assertSignature(`${path}.signature`, item.signature);
    assertAddress(`${path}.from`, item.from);
    assertAddress(`${path}.to`, item.to);
    if (item.mint) assertAddress(`${path}.mint`, item.mint);
    if (item.token.trim() === "") throw invalid(`${path}.token`, "must name the token (a symbol, or the mint), not only spaces");
    const hidden = hiddenCharacterIssue(item.token);
    if (hidden) throw invalid(`${path}.token`, hidden);
    // A token given as a mint and a mint of another: which one moved cannot be told, and the
    // history would show two identities for one movement.
    if (item.mint && item.token !== item.mint && isAddress(item.token)) {
      throw invalid(`${path}.mint`, "differs from token, which is itself a mint address: give the symbol as token, or leave mint out");
    }
    return { ...item, mint: item.mint ?? null };
  });
}

// A symbol that reads as a well-known one and is not it (" USDC", "USDC\u200b", "US\u00adDC",
// "USDC" and a Braille blank) is USDC to a person and another token to every comparison: a
// large_transfer filtered on USDC never fired on it (an evasion review, 2026-11-28). Refused
// rather than cleaned up, as an address with a space is: which token the feed meant is its to
// say. Other symbols may hold what any symbol may (an emoji joined by U+200D, a variation
// selector), not spaces around them nor control characters, which no symbol means.
const EDGE_SPACE = /^\s|\s$/u;
const CONTROL = /\p{Cc}/u;
/** What prints as nothing, or as a blank: what disguises a name as another. */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\s\u2800]/gu;

/** Printable ASCII with no space at either end: nothing to hide, and what nearly every feed sends. */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

function hiddenCharacterIssue(token: string): string | undefined {
  // Checked first, on every transaction of a batch: the NFKC pass below costs a microsecond.
  if (PLAIN.test(token)) return undefined;
  if (EDGE_SPACE.test(token)) return "must not begin or end with a space (give the symbol, or the mint, as it is)";
  const control = CONTROL.exec(token);
  if (control) return `holds a control character (${codePoint(control[0])}): give the symbol, or the mint, as it is`;
  const visible = token.replace(INVISIBLE, "").normalize("NFKC");
  if (visible !== token && isWellKnownSymbol(visible) && !isWellKnownSymbol(token)) {
    const hidden = [...new Set(token.match(INVISIBLE) ?? [])].map(codePoint);
    const holds = hidden.length > 0 ? `holds ${hidden.join(", ")}` : "is written in other characters";
    return `reads as the well-known symbol ${visible} but is another name (it ${holds}): give ${visible} as it is, or the mint`;
  }
  return undefined;
}

const codePoint = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** Checks the addresses and rejects duplicates (which of two snapshots should win is not knowable). */
export function normaliseAccounts(accounts: readonly AccountSnapshot[]): AccountSnapshot[] {
  const seen = new Set<string>();
  accounts.forEach((account, i) => {
    const path = `body.accounts.${i}`;
    assertAddress(`${path}.address`, account.address);
    if (seen.has(account.address)) throw invalid(`${path}.address`, "appears more than once in the batch");
    seen.add(account.address);
    assertUniqueMints(`${path}.tokenAccounts`, account.tokenAccounts);
    assertUniqueMints(`${path}.nfts`, account.nfts);
  });
  return [...accounts];
}

function assertUniqueMints(path: string, items: readonly { mint: string }[]): void {
  const mints = new Set<string>();
  items.forEach((item, j) => {
    assertAddress(`${path}.${j}.mint`, item.mint);
    if (mints.has(item.mint)) throw invalid(`${path}.${j}.mint`, "appears more than once for this address");
    mints.add(item.mint);
  });
}


// Every number of a batch is stored as sent, to the last digit, and judged as stored: JSON.parse
// reads `9.99999999999999999` as 10, which would be stored as 10 and reach a large_transfer
// threshold of 10 the transfer never reached (`99999999.999999999`, 100000000). Such a literal is
// read from the body as sent (src/ingest/exact-token-amounts.ts: a byte search, a full scan only
// when one may be there) and refuses the batch, as every other problem of a native batch does.
// Account snapshots are held to the same promise: their SOL balance enters the large_outflow
// risk factor, and every one of their numbers is stored and shown as sent.

/** The numbers of a transactions batch, judged by the literal sent. */
export const TRANSACTION_NUMBERS = numberPaths(".transactions[*].amount", ".transactions[*].fee");

/** The numbers of an accounts batch, judged by the literal sent. */
export const ACCOUNT_NUMBERS = numberPaths(
  ".accounts[*].balance",
  ".accounts[*].tokenAccounts[*].balance",
  ".accounts[*].tokenAccounts[*].usdValue",
  ".accounts[*].nfts[*].floorPrice",
);

/** A batch can hold thousands of such numbers: the first ones name the problem well enough. */
export const MAX_INEXACT_NUMBER_ERRORS = 100;

/**
 * Refuses the batch (400, naming each path, `body.transactions.3.amount`) when a number at
 * `paths` of its body (the bytes as received; JSON.parse accepted them) was sent with more
 * significant digits than a double holds exactly, and so was rounded by parsing.
 */
export function assertExactNumbers(body: Buffer, paths: NumberPaths): void {
  const found = inexactNumberLiterals(body, paths);
  if (found.length === 0) return;
  const errors: FieldError[] = found
    .slice(0, MAX_INEXACT_NUMBER_ERRORS)
    .map(({ path }) => ({ path: `body.${path.join(".")}`, message: INEXACT_NUMBER_MESSAGE }));
  const more = found.length - errors.length;
  const detail = errors.map((e) => `${e.path} ${e.message}`).join("; ") + (more > 0 ? `; and ${more} more such numbers` : "");
  throw new ProblemError("validation_failed", detail, { errors });
}
