// A Helius delivery, item by item: the items we can store, and those we refuse with the
// reasons. Pure; the JSON-schema check is passed in (the HTTP layer compiles it with the app's
// ajv, so its messages read like every other 400's).
//
// Why item by item: Helius retries a delivery it got no 2xx for (up to 3 times) and then drops
// it for good. Refusing the whole delivery for one item in a shape we did not expect (a new
// field type, a string where we read a number) lost every other item with it. So each item is
// judged on its own; the caller stores the valid ones and keeps the refused ones whole.
import { blockTimeAheadIssue } from "./block-time.ts";
import { heliusItemAddressIssues, heliusItemAmountIssues, type FieldIssue, type HeliusTransaction } from "./helius.ts";

/** The schema's issues with one item, their paths under `at` (`body.3.fee`); none when it passes. */
export type ItemSchemaCheck = (item: unknown, at: string) => FieldIssue[];

export type RefusedItem = {
  /** The item's position in the delivery, from 0. */
  index: number;
  /** Its signature when it has a readable one (see readableSignature), else null. */
  signature: string | null;
  errors: FieldIssue[];
  /** The item as received. */
  item: unknown;
};

/**
 * A hostile item can fail on every field of a thousand transfers; its first problems are
 * enough to see what is wrong, and the item itself is kept whole.
 */
export const MAX_ERRORS_PER_ITEM = 20;

export function triageHeliusItems(
  items: readonly unknown[],
  checkSchema: ItemSchemaCheck,
  now: Date,
): { valid: HeliusTransaction[]; refused: RefusedItem[] } {
  const valid: HeliusTransaction[] = [];
  const refused: RefusedItem[] = [];
  items.forEach((item, index) => {
    const at = `body.${index}`;
    const schemaErrors = checkSchema(item, at);
    // The byte lengths are read only from an item of the right shape.
    const errors =
      schemaErrors.length > 0
        ? schemaErrors
        : [
            ...blockTimeIssues(item as HeliusTransaction, at, now),
            ...heliusItemAddressIssues(item as HeliusTransaction, at),
            ...heliusItemAmountIssues(item as HeliusTransaction, at),
          ];
    if (errors.length === 0) valid.push(item as HeliusTransaction);
    else refused.push({ index, signature: readableSignature(item), errors: capped(errors, at), item });
  });
  return { valid, refused };
}

function blockTimeIssues(item: HeliusTransaction, at: string, now: Date): FieldIssue[] {
  const ahead = blockTimeAheadIssue(item.timestamp, now);
  return ahead ? [{ path: `${at}.timestamp`, message: ahead }] : [];
}

// Base58 of any length a signature could be mistyped to, and nothing else: it goes into a log
// line, a response and a text column, none of which should carry what a hostile item holds.
const READABLE_SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{1,100}$/;

function readableSignature(item: unknown): string | null {
  const signature = typeof item === "object" && item !== null ? (item as { signature?: unknown }).signature : undefined;
  return typeof signature === "string" && READABLE_SIGNATURE.test(signature) ? signature : null;
}

function capped(errors: FieldIssue[], at: string): FieldIssue[] {
  if (errors.length <= MAX_ERRORS_PER_ITEM) return errors;
  const more = errors.length - MAX_ERRORS_PER_ITEM;
  return [...errors.slice(0, MAX_ERRORS_PER_ITEM), { path: at, message: `has ${more} more problems not listed` }];
}
