// What an alert's settings may be (DESIGN.md section 4). The threshold means something
// different per condition, so its range does too. Pure.
import { isAddress } from "./base58.ts";
import { decimalPlaces } from "./decimal.ts";
import { WELL_KNOWN_TOKENS, isWellKnownSymbol } from "./tokens.ts";
import { DEFAULT_THRESHOLDS, type Condition } from "./types.ts";

/** A week: longer silences are better expressed by pausing the alert. */
export const MAX_COOLDOWN_SECONDS = 604_800;
export const MAX_TOKEN_FILTER_LENGTH = 64;

// Thresholds are stored with 9 decimals, so the smallest positive one is 0.000000001;
// the upper ends keep far inside numeric(38, 9) and beyond anything meaningful.
const SMALLEST = 0.000000001;

/** whole: only whole numbers (a risk score is one: a rise of 1.5 points fires as one of 2 would, and the alert showed 1.5). */
type ThresholdRule = { min: number; max: number; whole?: boolean; meaning: string };

export const THRESHOLD_RULES: Readonly<Record<Condition, ThresholdRule>> = {
  large_transfer: {
    min: SMALLEST,
    max: 1e18,
    meaning: "an amount in the transaction's token units, greater than 0 (at least 0.000000001) and at most 1e18",
  },
  suspicious_counterparty: { min: 0, max: 100, meaning: "a counterparty risk score from 0 to 100" },
  unusual_activity: {
    min: SMALLEST,
    max: 1_000_000,
    meaning: "a multiple of the wallet's hourly baseline, greater than 0 and at most 1000000",
  },
  risk_score_increase: { min: 1, max: 100, whole: true, meaning: "a whole number of points from 1 to 100 (a rise of the risk score)" },
};

export type ThresholdResult = { ok: true; threshold: number } | { ok: false; message: string };

/** The threshold to store: the given one when it is in range, else the condition's default. */
export function effectiveThreshold(condition: Condition, given: number | undefined): ThresholdResult {
  const rule = THRESHOLD_RULES[condition];
  if (given === undefined) {
    const fallback = DEFAULT_THRESHOLDS[condition];
    return fallback === undefined
      ? { ok: false, message: `is required for ${condition} alerts: ${rule.meaning}` }
      : { ok: true, threshold: fallback };
  }
  if (!Number.isFinite(given) || given < rule.min || given > rule.max || (rule.whole && !Number.isInteger(given))) {
    return { ok: false, message: `must be ${rule.meaning} for ${condition} alerts` };
  }
  // Stored with 9 decimals: a finer threshold was rounded without a word, and the alert then
  // fired on amounts its owner had set it not to (10.0000000004 stored as 10). This judges the
  // double: a literal JSON.parse had to round (9999999.999999999 read as 9999999.999999998,
  // whose 9 decimals pass) is refused before, by the route (assertExactThreshold).
  if (decimalPlaces(given) > THRESHOLD_DECIMALS) {
    return { ok: false, message: `must have at most ${THRESHOLD_DECIMALS} decimal places` };
  }
  return { ok: true, threshold: given };
}

const THRESHOLD_DECIMALS = 9;

export type TokenFilterResult = { ok: true; token: string } | { ok: false; message: string };

const WELL_KNOWN_SYMBOLS = WELL_KNOWN_TOKENS.map((t) => t.symbol).join(", ");
const WELL_KNOWN_MINT_BY_LOWER_CASE: ReadonlyMap<string, string> = new Map(WELL_KNOWN_TOKENS.map((t) => [t.mint.toLowerCase(), t.mint]));

/**
 * The large_transfer token filter to store: trimmed, and only a name that can match. A
 * well-known symbol stands for its mint (WSOL for SOL); any other token must be named by its
 * mint. Its symbol is whatever its creator chose, so any token may claim it (the fake-token
 * scam), and Helius names such a token by its mint alone: a filter "POPCAT" would never fire
 * on a Helius transaction, and where it did match (native ingest) it would match every token
 * calling itself POPCAT. Filters stored before this rule keep matching as they did.
 */
export function tokenFilter(given: string): TokenFilterResult {
  const token = given.trim();
  if (token === "") {
    return { ok: false, message: "must name the token (a well-known symbol or a mint address), not only spaces" };
  }
  const miscased = WELL_KNOWN_MINT_BY_LOWER_CASE.get(token.toLowerCase());
  if (miscased !== undefined && miscased !== token) {
    // Base58 is case-sensitive: re-cased (as forms and spreadsheets do), a mint is another
    // mint, often still a valid address, and the filter would never fire.
    return { ok: false, message: `is a well-known mint in other letter case, which is another mint; mints are case-sensitive: did you mean ${miscased}?` };
  }
  if (isWellKnownSymbol(token) || isAddress(token)) return { ok: true, token };
  return {
    ok: false,
    message:
      `is neither a well-known symbol (${WELL_KNOWN_SYMBOLS}, in any letter case; WSOL is SOL) nor a mint address: ` +
      "any other token's symbol is whatever its creator chose, claimed by any token alike, and Helius names such a token by its mint only, " +
      "so give the token's mint address instead",
  };
}
