// Bearer-token authentication (RFC 6750) with jose. The caller is the token's `sub`;
// scopes come from a space-separated `scope` claim, or an `scp` claim (an array, or a
// space-separated string as Microsoft Entra ID writes it).
import { errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from "jose";
import type { Config } from "../config.ts";
import { createTtlCache } from "../ttl-cache.ts";
import { createJwksKeySource, KeySetCoolingDown, KeySourceUnavailable, REFETCH_COOLDOWN_MS } from "./jwks-keys.ts";
import { ProblemError } from "./problem.ts";

export const SCOPES = [
  "wallets:read",
  "wallets:write",
  "transactions:read",
  "alerts:read",
  "alerts:write",
  "ingest:write",
  "risk:write",
  "admin",
] as const;
export type Scope = (typeof SCOPES)[number];

export type Caller = {
  sub: string;
  scopes: ReadonlySet<string>;
  email: string | undefined;
  phone: string | undefined;
};

export type TokenVerifier = ((token: string) => Promise<Caller>) & {
  /** The caller of a token verified before and not expired since, without waiting. */
  known: (token: string) => Caller | undefined;
};

const CLOCK_TOLERANCE_SECONDS = 30;
const ISSUED_IN_THE_FUTURE = `the token's iat claim is more than ${CLOCK_TOLERANCE_SECONDS} s in the future`;
// Verified tokens are remembered (by their exact text) for a while, so a busy caller does
// not pay a signature check per request. An entry never outlives the token's own exp
// (plus the tolerance), nor 5 minutes — so a key withdrawn from the JWKS stops working soon.
const VERIFIED_TOKEN_CACHE_SIZE = 10_000;
const VERIFIED_TOKEN_MAX_AGE_MS = 5 * 60_000;

// `now`: Date.now as it is at each call, so that a clock a test fakes after the app is built is read.
export function createTokenVerifier(jwt: Config["jwt"], now: () => number = () => Date.now()): TokenVerifier {
  // One key source, one algorithm family: a token can never switch from RS256 to HS256
  // (or to `none`) to be checked against the wrong key. HS256 may have two secrets, both HS256:
  // JWT_SECRET, then JWT_SECRET_PREVIOUS (a rotation's window, README "Rotating secrets").
  const keys: (Uint8Array | JWTVerifyGetKey)[] = jwt.jwksUrl
    ? [createJwksKeySource(new URL(jwt.jwksUrl), now)]
    : [jwt.secret, ...(jwt.previousSecret ? [jwt.previousSecret] : [])].map((secret) => new TextEncoder().encode(secret));
  const algorithms = jwt.jwksUrl ? ["RS256", "ES256"] : ["HS256"];
  const verified = createTtlCache<string, Caller>(VERIFIED_TOKEN_CACHE_SIZE, now);
  const { maxTokenAgeMs } = jwt;

  const verify = async (token: string): Promise<Caller> => {
    const known = verified.get(token);
    if (known) return known;
    const at = now();
    let payload: JWTPayload;
    try {
      payload = await verifiedPayload(token, keys, {
        algorithms,
        issuer: jwt.issuer,
        audience: jwt.audience,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ["exp", "sub"],
        // In seconds; jose then requires iat, and refuses one older than this (plus the tolerance).
        ...(maxTokenAgeMs === undefined ? {} : { maxTokenAge: maxTokenAgeMs / 1000 }),
        currentDate: new Date(at),
      });
    } catch (error) {
      if (error instanceof KeySourceUnavailable) throw keysUnavailable();
      if (error instanceof KeySetCoolingDown) throw keyNotFetchedYet(error.retryAfterSeconds);
      throw invalidToken(describeJoseError(error, maxTokenAgeMs));
    }
    // jose judges iat only with a maxTokenAge. A token "issued" a year ahead is one minted on a
    // wrong clock or made to outlive a cap on its age: refused as jose refuses it, beyond the tolerance.
    if (payload.iat !== undefined && payload.iat > Math.floor(at / 1000) + CLOCK_TOLERANCE_SECONDS) throw invalidToken(ISSUED_IN_THE_FUTURE);
    if (typeof payload.sub !== "string" || payload.sub === "") throw invalidToken("the token has no subject");
    const subjectProblem = subjectIssue(payload.sub);
    if (subjectProblem) throw invalidToken(subjectProblem);
    const caller: Caller = {
      sub: payload.sub,
      scopes: readScopes(payload),
      email: typeof payload.email === "string" ? payload.email : undefined,
      phone: typeof payload.phone_number === "string" ? payload.phone_number : undefined,
    };
    // Nor, with a cap on a token's age, past the moment the cap refuses it.
    const agedOutAt = maxTokenAgeMs === undefined ? Infinity : (payload.iat! + CLOCK_TOLERANCE_SECONDS) * 1000 + maxTokenAgeMs;
    const expiresAt = Math.min((payload.exp! + CLOCK_TOLERANCE_SECONDS) * 1000, now() + VERIFIED_TOKEN_MAX_AGE_MS, agedOutAt);
    verified.set(token, caller, expiresAt);
    return caller;
  };
  return Object.assign(verify, { known: (token: string) => verified.get(token) });
}

/**
 * The token's claims, checked against the first key its signature verifies with. Any refusal
 * but the signature's (expired, another audience) is final: jose checks the signature before
 * the claims, so such a token was signed with that key, and another key would not change the
 * verdict. So a token verified by JWT_SECRET_PREVIOUS meets every check JWT_SECRET's meets.
 */
async function verifiedPayload(token: string, keys: (Uint8Array | JWTVerifyGetKey)[], options: JWTVerifyOptions): Promise<JWTPayload> {
  let refusal: unknown;
  for (const key of keys) {
    try {
      return (await jwtVerify(token, key as Uint8Array, options)).payload;
    } catch (error) {
      if (!(error instanceof joseErrors.JWSSignatureVerificationFailed)) throw error;
      refusal = error;
    }
  }
  throw refusal;
}

/**
 * The longest `sub` accepted, in characters: OpenID Connect's own bound (Core 1.0, section 2:
 * at most 255 ASCII characters). The subject is the owner of every wallet and alert, stored
 * in indexed text columns; a 6,000-character one made a create fail (500) on the index's row size.
 */
export const MAX_SUBJECT_LENGTH = 255;

// Control characters (NUL cannot be stored in a text column at all). A lone surrogate is not
// text: stored, it becomes U+FFFD, so "alice\ud800" and "alice\udfff" would share one owner.
const CONTROL_CHARACTER = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a token's subject cannot name an owner, or undefined when it can. */
export function subjectIssue(sub: string): string | undefined {
  // Two UTF-16 units at most per character: a longer string has too many characters anyway.
  if (sub.length > 2 * MAX_SUBJECT_LENGTH || [...sub].length > MAX_SUBJECT_LENGTH) {
    return `the token's subject (sub) is longer than ${MAX_SUBJECT_LENGTH} characters`;
  }
  if (CONTROL_CHARACTER.test(sub)) return "the token's subject (sub) contains a control character";
  if (LONE_SURROGATE.test(sub)) return "the token's subject (sub) is not well-formed Unicode (it has a lone surrogate)";
  return undefined;
}

function readScopes(payload: JWTPayload): Set<string> {
  if (typeof payload.scope === "string") return new Set(payload.scope.split(" ").filter(Boolean));
  if (Array.isArray(payload.scp)) return new Set(payload.scp.filter((s): s is string => typeof s === "string"));
  if (typeof payload.scp === "string") return new Set(payload.scp.split(" ").filter(Boolean));
  return new Set();
}

function describeJoseError(error: unknown, maxTokenAgeMs: number | undefined): string {
  if (error instanceof joseErrors.JWTExpired && error.claim === "iat")
    return `the token was issued more than ${maxTokenAgeMs! / 1000} s ago, the longest this service accepts; get a new one`;
  if (error instanceof joseErrors.JWTExpired) return "the token has expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === "iat") {
    if (error.reason === "missing") return "the token has no iat claim, which this service needs to cap how old a token may be";
    if (error.reason === "check_failed") return ISSUED_IN_THE_FUTURE;
  }
  // Absent rather than wrong: "not accepted" sent a caller looking for a bad value that was never there.
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.reason === "missing")
    return `the token has no ${error.claim} claim, which this service requires`;
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `the token's ${error.claim} claim is not accepted`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "the token's algorithm is not accepted";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "no key matches the token";
  return "the token is malformed";
}

export function invalidToken(detail: string): ProblemError {
  return new ProblemError("unauthorized", detail, {
    headers: { "www-authenticate": `Bearer error="invalid_token", error_description="${detail}"` },
  });
}

/** Not the token's fault: the identity provider's keys cannot be fetched (see jwks-keys.ts). */
function keysUnavailable(): ProblemError {
  return new ProblemError("unavailable", "the identity provider's signing keys (JWT_JWKS_URL) cannot be fetched; try again shortly", {
    headers: { "retry-after": String(REFETCH_COOLDOWN_MS / 1000) },
  });
}

/**
 * Not the token's fault either: it names a key the keys fetched before it came lack, which the
 * provider may have just added, and they may be fetched again only in a few seconds (jwks-keys.ts).
 */
function keyNotFetchedYet(retryAfterSeconds: number): ProblemError {
  return new ProblemError(
    "unavailable",
    `the token's signing key is not among the identity provider's keys (JWT_JWKS_URL) fetched so far; they are fetched again in ${retryAfterSeconds} s: try again then`,
    { headers: { "retry-after": String(retryAfterSeconds) } },
  );
}

export function missingToken(): ProblemError {
  return new ProblemError("unauthorized", "an Authorization: Bearer <token> header is required", {
    // DESIGN.md section 3 names invalid_token for a missing token too, so clients need one check.
    headers: { "www-authenticate": 'Bearer realm="wallet-alerts", error="invalid_token"' },
  });
}

export function insufficientScope(scope: string): ProblemError {
  return new ProblemError("forbidden", `the token lacks the ${scope} scope`, {
    headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${scope}"` },
  });
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer +([^ ]+) *$/i.exec(header);
  return match?.[1];
}

/**
 * Authenticates an Authorization header: `admit` gets the caller (at once for a token seen
 * before, else once verified), `refuse` the 401 (no token, or one that does not verify). In
 * callback form because it runs on every request and a known token needs no wait.
 */
export function authenticate(
  verify: TokenVerifier,
  authorization: string | undefined,
  admit: (caller: Caller) => void,
  refuse: (error: unknown) => void,
): void {
  const token = bearerToken(authorization);
  if (!token) return refuse(missingToken());
  const known = verify.known(token);
  if (known) return admit(known);
  verify(token).then(admit, refuse);
}
