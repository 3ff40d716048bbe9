// A Helius delivery, item by item: the items we can store, and those we refuse with the
// reasons. Pure; the JSON-schema check is passed in (the HTTP layer compiles it with the app's
// ajv, so its messages read like every other 400's).
//
// Why item by item: Helius retries a delivery it got no 2xx for (up to 3 times) and then drops
// it for good. Refusing the whole delivery for one item in a shape we did not expect (a new
// field type, a string where we read a number) lost every other item with it. So each item is
// judged on its own; the caller stores the valid ones and keeps the refused ones whole.
import { blockTimeAheadIssue } from "./block-time.ts";
import type { InexactHeliusNumber } from "./exact-token-amounts.ts";
import { heliusItemAddressIssues, heliusItemAmountIssues, type AddressVerdicts, type FieldIssue } from "./helius-issues.ts";
import { compressedNftEvents, type HeliusTransaction } from "./helius.ts";

/**
 * What is wrong with the shape of one item, the `index`-th, at `at` (`body.3.fee`): the schema's
 * issues, or a key it reads given twice; none when it passes.
 */
export type ItemSchemaCheck = (item: unknown, at: string, index: number) => FieldIssue[];

export type RefusedItem = {
  /** The item's position in the delivery, from 0. */
  index: number;
  /** Its signature when it has a readable one (see readableSignature), else null. */
  signature: string | null;
  errors: FieldIssue[];
  /**
   * The item as received; an amount or fee sent as a number a double does not hold exactly is
   * written as the string of its literal (see keptWithLiterals).
   */
  item: unknown;
  /**
   * The item's text as sent, when its value lost part of it (a key given twice, of which JSON.parse
   * kept the last: helius-repeated-keys.ts); kept instead of `item`. Set by the HTTP layer.
   */
  sent?: string;
};

/**
 * A hostile item can fail on every field of a thousand transfers; its first problems are
 * enough to see what is wrong, and the item itself is kept whole.
 */
export const MAX_ERRORS_PER_ITEM = 20;

/**
 * The most movements (native transfers, token transfers and compressed-NFT events, each a row;
 * an item that names none is one row) one delivery stores. Native ingest stores at most 1,000
 * rows a request; without a bound of its own a 10 MiB delivery of 1,000 items of 1,000 transfers
 * each became some 75,000–110,000 rows: seconds of the event loop spent checking addresses
 * (every other request waiting behind it), an insert longer than REQUEST_TIMEOUT (answered 503
 * while the rows still landed, so Helius sent it all again) and one evaluation group past
 * EVALUATION_GROUP_TRANSACTIONS (10,000 by default, this same figure). Real deliveries hold a
 * few movements an item.
 *
 * The items past the bound are refused, each on its own, and kept with the other refused items,
 * not the delivery: refused whole, Helius would send the same bytes three more times and then
 * drop every item of it, the valid ones with them, and nothing would be kept. The bound is met
 * in the delivery's order and the items from the first one that does not fit on are refused
 * unread (no address of theirs is decoded), so what is stored is the delivery's first items,
 * in order, and what is kept its last: posted again in smaller deliveries, they are read then.
 */
export const MAX_MOVEMENTS_PER_DELIVERY = 10_000;

/** The error of an item past the bound, at the item's path. */
export const pastMovementsMessage = (max: number) =>
  `was not read: the delivery's items up to this one name more than ${max} movements (native transfers, token transfers, ` +
  `compressed-NFT events; an item with none counts 1), the most one delivery stores; it is kept with the refused items: ` +
  `post it again in a smaller delivery`;

/**
 * `inexactNumbers`: the amount and fee number literals of the delivery that a double does not
 * hold exactly (inexactHeliusNumbers of its body), which JSON.parse rounded in `items`.
 * `unread`: how many items were refused for coming past `maxMovements` (MAX_MOVEMENTS_PER_DELIVERY).
 */
export function triageHeliusItems(
  items: readonly unknown[],
  checkSchema: ItemSchemaCheck,
  now: Date,
  inexactNumbers: readonly InexactHeliusNumber[] = [],
  maxMovements: number = MAX_MOVEMENTS_PER_DELIVERY,
): { valid: HeliusTransaction[]; refused: RefusedItem[]; unread: number } {
  const valid: HeliusTransaction[] = [];
  const refused: RefusedItem[] = [];
  const inexactByItem = byItem(inexactNumbers);
  const checkedAddresses: AddressVerdicts = new Map();
  let movements = 0;
  let unread = 0;
  items.forEach((item, index) => {
    const at = `body.${index}`;
    const inexact = inexactByItem.get(index);
    // Kept with its lamports as read, whatever the refusal: posted again once mended, it is then
    // stored as it would have been here (lamports are taken rounded, see heliusItemAmountIssues;
    // no refusal is about a lamport's digits), not refused for a lamport written as a string, an
    // error its first refusal never named. Its token amounts keep their digits: those decide.
    const tokenLiterals = inexact && tokenAmountsOnly(inexact);
    const refuse = (errors: FieldIssue[]) =>
      refused.push({ index, signature: readableSignature(item), errors: capped(errors, at), item: tokenLiterals ? keptWithLiterals(item, tokenLiterals) : item });
    const refuseUnread = () => refuse([{ path: at, message: pastMovementsMessage(maxMovements) }]);
    if (unread > 0) {
      unread += 1;
      return refuseUnread();
    }
    const schemaErrors = checkSchema(item, at, index);
    if (schemaErrors.length > 0) return refuse(schemaErrors);
    // Of the right shape: its lists are arrays (or null) of at most MAX_TRANSFERS_PER_ITEM each.
    const own = movementsOf(item as HeliusTransaction);
    if (movements + own > maxMovements) {
      unread = 1;
      return refuseUnread();
    }
    movements += own;
    // The byte lengths are read only from an item of the right shape.
    const errors = [
      ...blockTimeIssues(item as HeliusTransaction, at, now),
      ...heliusItemAddressIssues(item as HeliusTransaction, at, checkedAddresses),
      ...heliusItemAmountIssues(item as HeliusTransaction, at, inexact),
    ];
    if (errors.length === 0) valid.push(item as HeliusTransaction);
    else refuse(errors);
  });
  return { valid, refused, unread };
}

/**
 * The rows an item may become: one per movement it names (fewer when some native transfers are
 * a token's plumbing, see nativeLegs in helius.ts), one when it names none.
 */
function movementsOf(item: HeliusTransaction): number {
  const named = (item.nativeTransfers?.length ?? 0) + (item.tokenTransfers?.length ?? 0) + compressedNftEvents(item).length;
  return Math.max(1, named);
}

/** The literals of token amounts alone, none of lamports (native transfer amounts, the fee). */
function tokenAmountsOnly(literals: ReadonlyMap<string, string>): Map<string, string> {
  return new Map([...literals].filter(([field]) => field.startsWith("tokenTransfers.")));
}

/** Literals by item index, then by field (`tokenTransfers.1.tokenAmount`). */
function byItem(inexactNumbers: readonly InexactHeliusNumber[]): Map<number, Map<string, string>> {
  const items = new Map<number, Map<string, string>>();
  for (const { item, field, literal } of inexactNumbers) {
    const fields = items.get(item) ?? new Map<string, string>();
    items.set(item, fields.set(field, literal));
  }
  return items;
}

/**
 * The item to keep, its inexact numbers written as the strings of their literals (a copy along
 * those paths; the rest is shared). Kept as the number JSON.parse made of it, the refused item
 * would hold the rounded amount (10 for 9.99999999999999999, 10000000000000000 lamports for
 * 10000000000000001): the digits sent would be lost to the operator, and the item posted again
 * as kept would be accepted with the very amount it was refused for. As a string it keeps every
 * digit and is refused again (a tokenAmount string for its digits, lamports for not being an
 * integer). The literals are only ever found at a number, along the scan's paths.
 */
function keptWithLiterals(item: unknown, literals: ReadonlyMap<string, string>): unknown {
  let kept = item;
  for (const [field, literal] of literals) kept = withStringAt(kept, field.split("."), literal);
  return kept;
}

/** `value` with the number at `steps` replaced by `literal`; `value` itself when there is no number there. */
function withStringAt(value: unknown, steps: readonly string[], literal: string): unknown {
  const [step, ...rest] = steps;
  if (step === undefined || typeof value !== "object" || value === null) return value;
  const inner: unknown = (value as Record<string, unknown>)[step];
  const replaced = rest.length > 0 ? withStringAt(inner, rest, literal) : typeof inner === "number" ? literal : inner;
  if (replaced === inner) return value;
  return Array.isArray(value) ? value.map((element, index) => (String(index) === step ? replaced : element)) : { ...value, [step]: replaced };
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
