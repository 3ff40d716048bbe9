// RFC 9457 problem details. Every failure that leaves the API is one of these codes: DESIGN.md
// section 3's closed list, which clients are built from, so a new kind of failure takes the
// code of its status and says what it is in its detail (a create over MAX_ALERTS_PER_* is a
// conflict whose detail names the cap), never a code of its own. One status came later than
// the list and has no code there: 412, an If-Match that does not hold (etag.ts), whose code
// precondition_failed is the list's one addition (README, Errors).
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

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  errors?: FieldError[];
  requestId: string;
};

export class ProblemError extends Error {
  override name = "ProblemError";
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ProblemCode, detail: string, options: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.code = code;
    this.status = PROBLEM_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problemBody(code: ProblemCode, detail: string, requestId: string, errors?: FieldError[]): ProblemBody {
  const { status, title } = PROBLEM_CODES[code];
  return {
    type: `https://wallet-alerts.dev/problems/${code.replaceAll("_", "-")}`,
    title,
    status,
    detail,
    code,
    ...(errors && errors.length > 0 ? { errors } : {}),
    requestId,
  };
}

export const notFound = (what: string) => new ProblemError("not_found", `${what} was not found`);
export const invalid = (path: string, message: string) =>
  new ProblemError("validation_failed", `${path} ${message}`, { errors: [{ path, message }] });
