// Whether an error means that PostgreSQL or Redis is down (or going down, or refusing new
// connections): the API answers such an error 503, and a worker logs such job failures
// once a minute rather than once per job. Nothing was half-done: the work may be retried.
const UNAVAILABLE_PATTERNS = [
  /ECONNREFUSED/,
  /ECONNRESET/,
  /ETIMEDOUT/,
  /EPIPE/,
  /Stream isn't writeable/,
  /enableOfflineQueue/,
  /Connection is closed/,
  // ioredis's answer to a command that was sent when the connection dropped (Redis saving
  // before it shuts down, a failover): with maxRetriesPerRequest 1 it is not sent again.
  /max retries per request/,
  /CONNECTION_(CLOSED|ENDED|DESTROYED)/,
  /CONNECT_TIMEOUT/,
  /terminating connection/,
  /the database system is (starting up|shutting down)/,
];

export function isUnavailableError(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const { code, message } = current as { code?: unknown; message?: unknown };
    const text = `${String(code ?? "")} ${String(message ?? "")}`;
    if (UNAVAILABLE_PATTERNS.some((pattern) => pattern.test(text))) return true;
    if (code === "57P01" || code === "57P03" || code === "53300") return true; // admin shutdown, cannot connect now, too many connections
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
