// RFC 9457 problem details. Every failure that leaves the API is one of these codes: DESIGN.md
// section 3's closed list, which clients are built from, so a new kind of failure takes the
// code of its status and says what it is in its detail (a create over MAX_ALERTS_PER_* is a
// conflict whose detail names the cap), never a code of its own. One status came later than
// the list and has no code there: 412, an If-Match that does not hold (etag.ts), whose code
// precondition_failed is the list's one addition (README, Errors).
//
// What a client must tell apart within one code is an extension member (RFC 9457 section 3.2),
// not a code: `limit` on a 409 that a MAX_*_PER_* cap refused. Without it that 409 had the type
// and code of "address already tracked", and a script that carries on past a 409 (the way a
// re-run of a create must) skipped the cap without a word; only a missing Location told them apart.
export const PROBLEM_CODES = {
  validation_failed: { status: 400, title: "Request is not valid" },
  unauthorized: { status: 401, title: "Authentication required" },
  forbidden: { status: 403, title: "Not allowed" },
  not_found: { status: 404, title: "Not found" },
  conflict: { status: 409, title: "Conflict" },
  precondition_failed: { status: 412, title: "Precondition failed" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  rate_limited: { status: 429, title: "Too many requests" },
  internal: { status: 500, title: "Internal error" },
  unavailable: { status: 503, title: "Service unavailable" },
} as const;

export type ProblemCode = keyof typeof PROBLEM_CODES;
export type FieldError = { path: string; message: string };

/** The settings whose cap refuses a create (a 409 conflict with a `limit`): config.ts's MAX_*_PER_*. */
export const CAP_SETTINGS = ["MAX_ALERTS_PER_CALLER", "MAX_ALERTS_PER_WALLET", "MAX_WALLETS_PER_CALLER"] as const;
export type CapSetting = (typeof CAP_SETTINGS)[number];
/** The cap that refused: its setting and its value. Waiting does not help; a delete or the operator does. */
export type CapLimit = { setting: CapSetting; max: number };

/** A problem's extension members (RFC 9457 section 3.2), each optional; schemas.ts's ProblemSchema documents them. */
export type ProblemExtensions = { limit?: CapLimit };

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  errors?: FieldError[];
  requestId: string;
} & ProblemExtensions;

export type ProblemOptions = { errors?: FieldError[]; headers?: Record<string, string>; extensions?: ProblemExtensions };

export class ProblemError extends Error {
  override name = "ProblemError";
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: ProblemExtensions;

  constructor(code: ProblemCode, detail: string, options: ProblemOptions = {}) {
    super(detail);
    this.code = code;
    this.status = PROBLEM_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problemBody(
  code: ProblemCode,
  detail: string,
  requestId: string,
  errors?: FieldError[],
  extensions: ProblemExtensions = {},
): ProblemBody {
  const { status, title } = PROBLEM_CODES[code];
  return {
    type: `https://wallet-alerts.dev/problems/${code.replaceAll("_", "-")}`,
    title,
    status,
    detail,
    code,
    ...(errors && errors.length > 0 ? { errors } : {}),
    ...(extensions.limit ? { limit: extensions.limit } : {}),
    requestId,
  };
}

/**
 * A create that a MAX_*_PER_* cap refused: a conflict (DESIGN.md section 3 has no code of its
 * own for it) whose `limit` names the cap, and whose detail says what the caller (or the
 * operator) can do. No Location: no one resource is in the way.
 */
export const capReached = (setting: CapSetting, max: number, detail: string) =>
  new ProblemError("conflict", detail, { extensions: { limit: { setting, max } } });

export const notFound = (what: string) => new ProblemError("not_found", `${what} was not found`);
export const invalid = (path: string, message: string) =>
  new ProblemError("validation_failed", `${path} ${message}`, { errors: [{ path, message }] });
