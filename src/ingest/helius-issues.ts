// What a Helius item's JSON schema cannot say, each problem at its path (`body.3.feePayer`, as
// the HTTP layer writes schema errors): the decoded lengths of its signature and addresses,
// and amounts that would not be stored and judged as sent. Pure.
import { isAddress, isSignature } from "../domain/base58.ts";
import { isExactAsDouble } from "../domain/decimal.ts";
import { INEXACT_DIGITS, INEXACT_NUMBER_MESSAGE } from "./exact-token-amounts.ts";
import { present, type HeliusTransaction } from "./helius.ts";

export type FieldIssue = { path: string; message: string };

/**
 * Addresses already decoded in one delivery, and whether each is one. A delivery repeats the
 * same few accounts (the payer, its token accounts, a mint) thousands of times, and decoding
 * base58 costs about 2 µs: a 9 MiB delivery spent some 230 ms of the event loop on it.
 */
export type AddressVerdicts = Map<string, boolean>;

function isAddressOnce(value: string, checked: AddressVerdicts): boolean {
  let verdict = checked.get(value);
  if (verdict === undefined) {
    verdict = isAddress(value);
    checked.set(value, verdict);
  }
  return verdict;
}

const ADDRESS_MESSAGE = "must be a Solana address (base58 of 32 bytes)";

/**
 * What a JSON schema cannot say: the decoded byte lengths of an item's signature and
 * addresses. Paths are written as the HTTP layer writes schema errors (`body.3.feePayer`), the
 * item being at `at`.
 */
export function heliusItemAddressIssues(item: HeliusTransaction, at: string, checked: AddressVerdicts = new Map()): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const account = (path: string, value: string | null | undefined, optional: boolean) => {
    if (optional && !present(value)) return;
    if (!present(value) || !isAddressOnce(value, checked)) issues.push({ path: `${at}.${path}`, message: ADDRESS_MESSAGE });
  };
  if (!isSignature(item.signature)) {
    issues.push({ path: `${at}.signature`, message: "must be a transaction signature (base58 of 64 bytes)" });
  }
  account("feePayer", item.feePayer, false);
  (item.nativeTransfers ?? []).forEach((t, j) => {
    account(`nativeTransfers.${j}.fromUserAccount`, t.fromUserAccount, true);
    account(`nativeTransfers.${j}.toUserAccount`, t.toUserAccount, true);
  });
  (item.tokenTransfers ?? []).forEach((t, j) => {
    account(`tokenTransfers.${j}.fromUserAccount`, t.fromUserAccount, true);
    account(`tokenTransfers.${j}.toUserAccount`, t.toUserAccount, true);
    account(`tokenTransfers.${j}.mint`, t.mint, false);
  });
  (item.events?.compressed ?? []).forEach((event, j) => {
    account(`events.compressed.${j}.treeId`, event.treeId, false);
    account(`events.compressed.${j}.assetId`, event.assetId, false);
    account(`events.compressed.${j}.oldLeafOwner`, event.oldLeafOwner, true);
    account(`events.compressed.${j}.newLeafOwner`, event.newLeafOwner, true);
  });
  return issues;
}

/** heliusItemAddressIssues of every item of a delivery, each at `base.<index>`. */
export function heliusAddressIssues(items: readonly HeliusTransaction[], base = "body"): FieldIssue[] {
  const checked: AddressVerdicts = new Map();
  return items.flatMap((item, i) => heliusItemAddressIssues(item, `${base}.${i}`, checked));
}

/**
 * Lamports as SOL, every digit written out: 9000000000000001 → "9000000.000000001". `lamports`
 * is a whole number, as the schema has it. What a double makes of the same division is a
 * rounding of this decimal: the SOL amount is stored and judged as sent only when it is exact.
 */
export function solDecimal(lamports: number): string {
  const digits = BigInt(lamports).toString().padStart(10, "0");
  const fraction = digits.slice(-9).replace(/0+$/, "");
  return fraction ? `${digits.slice(0, -9)}.${fraction}` : digits.slice(0, -9);
}

/**
 * The amounts of an item that would not be stored and judged as sent, each at its path under
 * `at`. A token amount: a string by its digits, a number by the literal it was sent as, which
 * JSON.parse has already rounded. Lamports (native transfers, the fee): by the literal too — a
 * double holds every whole number only up to 2^53, and 10000000000000001 reads as
 * 10000000000000000 — and then by their value in SOL, a decimal with 9 places that a double
 * holds exactly only below 2^23 SOL (9000000000000001 lamports would be 9000000.000000002 SOL,
 * and reach a threshold the transfer never reached). `inexactNumbers` holds the literals of
 * this item a double does not hold, by field (inexactHeliusNumbers, src/ingest/exact-token-amounts.ts,
 * reads them from the body as sent).
 */
export function heliusItemAmountIssues(
  item: HeliusTransaction,
  at: string,
  inexactNumbers: ReadonlyMap<string, string> = new Map(),
): FieldIssue[] {
  const lamports = (value: number, field: string): FieldIssue[] => {
    if (inexactNumbers.has(field)) return [{ path: `${at}.${field}`, message: INEXACT_NUMBER_MESSAGE }];
    const sol = solDecimal(value);
    return isExactAsDouble(sol) ? [] : [{ path: `${at}.${field}`, message: inexactSolMessage(sol) }];
  };
  const tokenAmount = (amount: number | string, field: string): FieldIssue[] =>
    (typeof amount === "string" && !isExactAsDouble(amount)) || (typeof amount === "number" && inexactNumbers.has(field))
      ? [{ path: `${at}.${field}`, message: INEXACT_NUMBER_MESSAGE }]
      : [];
  return [
    ...lamports(item.fee, "fee"),
    ...(item.nativeTransfers ?? []).flatMap((t, j) => lamports(t.amount, `nativeTransfers.${j}.amount`)),
    ...(item.tokenTransfers ?? []).flatMap((t, j) => tokenAmount(t.tokenAmount, `tokenTransfers.${j}.tokenAmount`)),
  ];
}

const inexactSolMessage = (sol: string) => `is ${sol} SOL, which ${INEXACT_DIGITS}; it would be judged as a rounded amount`;
