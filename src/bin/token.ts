// npm run token -- --sub alice --scope "wallets:read alerts:write" [--email a@x.io] [--phone +14155552671] [--ttl 12h]
// Mints a development token signed with JWT_SECRET; the token is the last line of stdout. Never
// with JWT_SECRET_PREVIOUS, which the API only accepts, beside JWT_SECRET, while a rotation ends.
// Refuses what would make a token the API rejects or misreads (an unknown scope: 403 on every
// route; a TTL under a second: expired on arrival; a claim that is no address: ignored), so a
// mistyped flag fails here, naming the flag, instead of later as a puzzling 401 or 403. So is a
// TTL longer than JWT_MAX_TOKEN_AGE: the API refuses a token issued longer ago than that,
// whatever its exp, so the token would stop working before the time asked for, with a 401 about
// its age. Without --ttl it lasts 12 hours, or JWT_MAX_TOKEN_AGE when that is shorter.
// Without --scope it grants a customer's scopes only: ingest:write and risk:write change data
// that every caller shares (transactions, balances, labels), so they are asked for by name.
import { parseArgs } from "node:util";
import { loadJwtConfig } from "../config.ts";
import { isEmailAddress } from "../domain/recipients.ts";
import { checkSmsNumber } from "../domain/sms-number.ts";
import { SCOPES, subjectIssue } from "../http/auth.ts";
import { mintToken, type TokenClaims } from "../http/mint-token.ts";
import { parseDuration } from "../duration.ts";

/** Scopes over data every caller shares, and admin (which grants them). */
const OPERATOR_SCOPES: ReadonlySet<string> = new Set(["admin", "ingest:write", "risk:write"]);

/** What a customer's token holds: its own wallets, their history and its alerts. */
const CALLER_SCOPES = SCOPES.filter((scope) => !OPERATOR_SCOPES.has(scope));

type Flags = { sub?: string | undefined; scope: string; email?: string | undefined; phone?: string | undefined; ttl?: string | undefined };

/** --ttl when not given: 12 hours, or JWT_MAX_TOKEN_AGE when that is shorter. */
const DEFAULT_TTL_MS = 12 * 3_600_000;

try {
  const { values } = parseArgs({
    options: {
      sub: { type: "string" },
      scope: { type: "string", default: CALLER_SCOPES.join(" ") },
      email: { type: "string" },
      phone: { type: "string" },
      ttl: { type: "string" },
    },
  });
  const jwt = loadJwtConfig();
  const claims = checkedClaims(values, jwt.maxTokenAgeMs);
  if (!jwt.secret) throw new Error("JWT_SECRET is required to mint a token");
  console.log(await mintToken(jwt.secret, claims, jwt));
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

/**
 * The token's claims, or one error naming every flag that is wrong and what it expects.
 * `maxTokenAgeMs`: the API's JWT_MAX_TOKEN_AGE, when set.
 */
function checkedClaims(flags: Flags, maxTokenAgeMs: number | undefined): TokenClaims {
  const scopes = flags.scope.split(/\s+/).filter(Boolean);
  // Whole seconds, as --ttl must be.
  const ttl = flags.ttl ?? asDuration(Math.floor(Math.min(DEFAULT_TTL_MS, maxTokenAgeMs ?? Infinity) / 1_000) * 1_000);
  const problems = [
    flags.sub ? subProblem(flags.sub) : "--sub is required (the caller the token speaks for)",
    scopeProblem(scopes),
    flags.email === undefined || isEmailAddress(flags.email) ? undefined : "--email: expected an email address such as alice@example.com",
    flags.phone === undefined ? undefined : phoneProblem(flags.phone),
    ttlProblem(ttl, maxTokenAgeMs),
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0) throw new Error(problems.join("; "));
  return { sub: flags.sub!, scope: scopes.join(" "), email: flags.email, phone: flags.phone, ttlSeconds: parseDuration(ttl) / 1_000 };
}

/**
 * The API's own check of an SMS recipient (without SMS_ALLOWED_COUNTRIES, a setting of the API's,
 * not of the token): an SMS alert that falls back to a claim it refuses is a 400.
 */
function phoneProblem(phone: string): string | undefined {
  const verdict = checkSmsNumber(phone, { allowedCountries: undefined });
  return verdict.ok ? undefined : `--phone ${verdict.reason}, which SMS alerts refuse`;
}

/** The API's own check of a subject (it answers 401 to a token whose sub cannot name an owner). */
function subProblem(sub: string): string | undefined {
  const issue = subjectIssue(sub);
  return issue ? `--sub: ${issue.replace("the token's subject (sub)", "the subject")}, which the API refuses (401)` : undefined;
}

function scopeProblem(scopes: string[]): string | undefined {
  const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (scopes.length > 0 && unknown.length === 0) return undefined;
  const named = unknown.length > 0 ? `unknown scope ${unknown.map((scope) => `"${scope}"`).join(", ")}; ` : "";
  return `--scope: ${named}expected a space-separated list of ${SCOPES.join(", ")}`;
}

/**
 * A JWT's exp counts whole seconds, so a TTL of 1500ms would be a fractional exp (or, rounded,
 * another TTL than the one asked for), and one under a second a token expired before it is used.
 */
function ttlProblem(raw: string, maxTokenAgeMs: number | undefined): string | undefined {
  const expected = "expected whole seconds, at least 1s, such as 90s, 30m or 12h";
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch {
    return `--ttl: "${raw}" is not a duration; ${expected}`;
  }
  if (ms < 1_000) return `--ttl: "${raw}" is under a second, a token expired before it is used; ${expected}`;
  if (ms % 1_000 !== 0) return `--ttl: "${raw}" is not whole seconds, which a token's exp counts; ${expected}`;
  if (maxTokenAgeMs !== undefined && ms > maxTokenAgeMs) {
    const cap = asDuration(maxTokenAgeMs);
    return `--ttl: "${raw}" is longer than JWT_MAX_TOKEN_AGE (${cap}), after which the API refuses the token whatever its exp; ask for at most ${cap}`;
  }
  return undefined;
}

/** A duration in the largest unit that holds it whole, as the settings are written: 12h, 90m. */
function asDuration(ms: number): string {
  const [unit, size] = ([["h", 3_600_000], ["m", 60_000], ["s", 1_000]] as const).find(([, size]) => ms % size === 0) ?? ["ms", 1];
  return `${ms / size}${unit}`;
}
