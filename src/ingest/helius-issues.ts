// What a Helius item's JSON schema cannot say, each problem at its path (`body.3.feePayer`, as
// the HTTP layer writes schema errors): the decoded lengths of its signature and addresses, a
// native transfer's empty side, and amounts that would not be stored and judged as sent. Pure.
import { isAddress, isSignature } from "../domain/base58.ts";
import { isExactAsDouble } from "../domain/decimal.ts";
import { INEXACT_NUMBER_MESSAGE } from "./exact-token-amounts.ts";
import { compressedNftEvents, present, type HeliusTransaction } from "./helius.ts";

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
 * A token transfer's empty side is a mint or a burn, and the mint stands in for it; a native
 * transfer has none. The fee payer stood in until 2026-11-28: 10,000 SOL from the payer to an
 * account Helius left empty was stored as the payer's transfer to itself, which no alert
 * fires on and no SOL-sent counter counts. No published example shows Helius leaving a native
 * side empty, so such an item is refused, and kept for replay, rather than stored with a side
 * guessed.
 */
export const EMPTY_NATIVE_SIDE_MESSAGE = "must be a Solana address: a native (SOL) transfer always has two sides, and an empty one is not guessed";

/**
 * What a JSON schema cannot say: the decoded byte lengths of an item's signature and
 * addresses, and a native transfer's side left empty. Paths are written as the HTTP layer
 * writes schema errors (`body.3.feePayer`), the item being at `at`.
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
  const nativeSide = (path: string, value: string | null) => {
    if (present(value)) account(path, value, false);
    else issues.push({ path: `${at}.${path}`, message: EMPTY_NATIVE_SIDE_MESSAGE });
  };
  (item.nativeTransfers ?? []).forEach((t, j) => {
    nativeSide(`nativeTransfers.${j}.fromUserAccount`, t.fromUserAccount);
    nativeSide(`nativeTransfers.${j}.toUserAccount`, t.toUserAccount);
  });
  (item.tokenTransfers ?? []).forEach((t, j) => {
    account(`tokenTransfers.${j}.fromUserAccount`, t.fromUserAccount, true);
    account(`tokenTransfers.${j}.toUserAccount`, t.toUserAccount, true);
    account(`tokenTransfers.${j}.mint`, t.mint, false);
  });
  compressedNftEvents(item).forEach((event, j) => {
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
 * The token amounts of an item that would not be stored and judged as sent, each at its path
 * under `at`: a string by its digits, a number by the literal it was sent as, which JSON.parse
 * has already rounded (`inexactNumbers`: the literals of this item a double does not hold, by
 * field, read from the body as sent by inexactHeliusNumbers in exact-token-amounts.ts).
 *
 * Lamports are not refused. A double holds every whole number up to 2^53 and SOL to the
 * lamport below 2^23 SOL (8,388,608); above that a transfer is held to the nearest double,
 * within a lamport or two. Refusing it instead dropped the largest transfers (about half of the
 * lamport values above 2^23 SOL) before any alert saw them: the ones a desk most needs.
 */
export function heliusItemAmountIssues(
  item: HeliusTransaction,
  at: string,
  inexactNumbers: ReadonlyMap<string, string> = new Map(),
): FieldIssue[] {
  return (item.tokenTransfers ?? []).flatMap((t, j) => {
    const field = `tokenTransfers.${j}.tokenAmount`;
    const inexact = (typeof t.tokenAmount === "string" && !isExactAsDouble(t.tokenAmount)) || (typeof t.tokenAmount === "number" && inexactNumbers.has(field));
    return inexact ? [{ path: `${at}.${field}`, message: INEXACT_NUMBER_MESSAGE }] : [];
  });
}

