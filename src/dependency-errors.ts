// Whether an error means that PostgreSQL or Redis cannot serve this process now: down (or
// going down, or refusing new connections), refusing its credentials, or read-only. The API
// answers such an error 503 (the client can do nothing about it), and a worker logs such job
// failures once a minute rather than once per job. Nothing was half-done: the work may be retried.
// Only our PostgreSQL and Redis clients' own errors say so: the same words from anyone else (a
// webhook receiver, the SMTP server) are not our stores' outage.
const UNAVAILABLE_PATTERNS = [
  /ECONNREFUSED/,
  // Also Node's word for a client that hung up mid-request: the API tells that apart first
  // (http/error-handler.ts), so only a service's connection reaches this.
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
  // Redis's own "not now" answers: loading its dataset after a restart (the append-only file
  // on, as recommended), a replica during a failover, a cluster moving slots or lost its quorum.
  /\bLOADING Redis is loading\b/,
  /\bREADONLY You can't write against a read only (replica|slave)\b/,
  /\bMASTERDOWN\b/,
  /\bTRYAGAIN\b/,
  /\bCLUSTERDOWN\b/,
  // Redis refusing writes for now: full at maxmemory under the noeviction policy the README
  // requires (also inside a script, where it is prefixed with the script's name), unable to
  // persist with stop-writes-on-bgsave-error (or an AOF write failing), fewer replicas in reach
  // than min-replicas-to-write, or busy with a script that has run too long. Each clears when
  // memory, the disk or the replicas come back (or the script ends), and what was stored in
  // PostgreSQL before the refused write is picked up by the reconciler.
  /\bOOM command not allowed\b/,
  /\bMISCONF\b/,
  /\bNOREPLICAS\b/,
  /\bBUSY Redis is busy\b/,
];

/**
 * SQLSTATEs that mean DATABASE_URL is wrong (or was made wrong under a running process: the
 * database dropped, the password rotated), or that the processes ask for more connections than
 * the server grants DATABASE_URL's role. Waiting does not help (or only until the next busy
 * spell); a process starting with one stops and says so, and one that meets it later answers
 * 503 until an operator acts.
 */
const REFUSED_SQLSTATES: Readonly<Record<string, string>> = {
  "28P01": "password authentication failed",
  "28000": "role does not exist, or no pg_hba.conf entry",
  "3D000": "database does not exist",
  // max_connections, the role's or the database's CONNECTION LIMIT, or the slots kept for superusers.
  "53300": "too many connections",
};

/**
 * What to do, where the server's words do not say it. Full connections look like an outage
 * from the client's side, but the cure is the pool's sizing: every API and worker process
 * opens up to DATABASE_POOL_SIZE connections.
 */
const REMEDIES: Readonly<Record<string, string>> = {
  "53300":
    "run fewer processes or a smaller DATABASE_POOL_SIZE (each process opens up to that many connections), or raise max_connections or the role's (or database's) CONNECTION LIMIT",
};

/** Redis's refusals of REDIS_URL's credentials (NOAUTH, WRONGPASS) or of its user's rights (NOPERM). */
const REDIS_REFUSAL = /\b(NOAUTH|WRONGPASS|NOPERM)\b/;

/**
 * A Redis Cluster node sending a command on to the node that holds its key's slot (MOVED, or ASK
 * while slots move): REDIS_URL leads to a cluster, which this service does not support (its
 * client is a standalone one, which never follows a redirect), so no wait mends it: a setting.
 */
const REDIS_CLUSTER_REDIRECT = /\b(MOVED|ASK) \d+ \S+:\d+/;
const CLUSTER_NOT_SUPPORTED =
  "REDIS_URL leads to a node of a Redis Cluster, which this service does not support: point it at a standalone Redis (a primary, or an endpoint that follows its failover)";

/** SQLSTATEs of a PostgreSQL that is there but cannot take this work now. */
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01", // admin shutdown
  "57P03", // cannot connect now
  "25006", // read-only transaction: a failover onto a standby, default_transaction_read_only
  ...Object.keys(REFUSED_SQLSTATES),
]);

export type Misconfiguration = {
  setting: "DATABASE_URL" | "REDIS_URL";
  service: "PostgreSQL" | "Redis";
  /** The server's own words (never the password: servers do not repeat it). */
  message: string;
  /** The SQLSTATE, or Redis's error word (NOAUTH, WRONGPASS, NOPERM; MOVED or ASK from a cluster node). */
  code: string;
};

/** ioredis's errors: redis-errors' classes (a server's reply, an aborted command) … */
const REDIS_CLIENT_ERRORS: ReadonlySet<string> = new Set([
  "RedisError",
  "ReplyError",
  "ParserError",
  "AbortError",
  "InterruptError",
  "MaxRetriesPerRequestError",
  "ClusterAllFailedError",
]);
/** … and the plain Errors it rejects a command with when its connection is gone or not ready (no code). */
const REDIS_CLIENT_MESSAGES = [/^Connection is closed\.$/, /^Stream isn't writeable and enableOfflineQueue options is false$/, /^Command timed out$/];

/**
 * Whether the error, or one of its causes, is our PostgreSQL or Redis client saying that its
 * server cannot serve us now. The API answers it 503 (http/error-handler.ts); a worker logs the
 * job's failure once a minute (queue/run-workers.ts jobFailure). A channel's error is not one:
 * the channels reduce every receiver's and provider's error to text thrown without a code
 * ("ECONNREFUSED: connect ECONNREFUSED 203.0.113.5:443"), and a webhook given up on a receiver
 * that refuses connections is no outage of ours.
 */
export function isUnavailableError(error: unknown): boolean {
  return errorChain(error).some((link) => fromStoreClient(link) && saysUnavailable(link));
}

/**
 * An error of our PostgreSQL or Redis client, not our own code saying another service's words.
 * postgres.js's errors and Node's socket errors carry a code (an SQLSTATE, CONNECTION_CLOSED,
 * ECONNREFUSED, …); ioredis's are named, or worded, as above.
 */
function fromStoreClient({ code, name, message }: ChainLink): boolean {
  if (typeof code === "string") return true;
  if (typeof name === "string" && REDIS_CLIENT_ERRORS.has(name)) return true;
  return typeof message === "string" && REDIS_CLIENT_MESSAGES.some((pattern) => pattern.test(message));
}

function saysUnavailable({ code, message }: ChainLink): boolean {
  if (typeof code === "string" && UNAVAILABLE_SQLSTATES.has(code)) return true;
  const text = `${String(code ?? "")} ${String(message ?? "")}`;
  return UNAVAILABLE_PATTERNS.some((pattern) => pattern.test(text)) || REDIS_REFUSAL.test(text) || REDIS_CLUSTER_REDIRECT.test(text);
}

/**
 * Redis's answers to a write that it takes no writes for now, while it answers everything else:
 * full at maxmemory (noeviction), a read-only replica, unable to persist, short of replicas.
 * A PING does not see them (it is no write), so a readiness check that pinged said ready while
 * every enqueue failed. The word Redis begins its answer with, and what it means for /readyz.
 */
const REDIS_WRITE_REFUSALS: Readonly<Record<string, string>> = {
  OOM: "full at maxmemory",
  READONLY: "a read-only replica",
  MISCONF: "unable to persist to disk",
  NOREPLICAS: "too few replicas in reach",
};

export type WriteRefusal = { code: string; meaning: string; message: string };

/** Redis's refusal of a write for now (see REDIS_WRITE_REFUSALS), from its own reply; undefined for anything else. */
export function redisWriteRefusal(error: unknown): WriteRefusal | undefined {
  for (const { name, message } of errorChain(error)) {
    if (typeof name !== "string" || !REDIS_CLIENT_ERRORS.has(name) || typeof message !== "string") continue;
    const code = /^[A-Z]+/.exec(message)?.[0];
    if (code && code in REDIS_WRITE_REFUSALS) return { code, meaning: REDIS_WRITE_REFUSALS[code]!, message };
  }
  return undefined;
}

/**
 * BullMQ's check of a new Redis connection, which reads the server's version from the INFO answer
 * as text, got an answer that is not text: the connection's answers are out of step with its
 * commands, or REDIS_URL does not lead to a Redis. BullMQ's own words for it ("doc.split is not a
 * function") say nothing of Redis, and it never checks that connection again.
 */
const UNREADABLE_INFO = /\bdoc\.split is not a function\b/;

export function isUnreadableInfoAnswer(error: unknown): boolean {
  return errorChain(error).some(({ message }) => UNREADABLE_INFO.test(String(message ?? "")));
}

/** The setting a server's refusal points at, when the error is one; undefined for anything else. */
export function misconfiguredSetting(error: unknown): Misconfiguration | undefined {
  for (const { code, message } of errorChain(error)) {
    if (typeof code === "string" && code in REFUSED_SQLSTATES) {
      return { setting: "DATABASE_URL", service: "PostgreSQL", message: String(message ?? REFUSED_SQLSTATES[code]), code };
    }
    const text = String(message ?? "");
    const refusal = REDIS_REFUSAL.exec(text);
    // From the error word on: ioredis prefixes some ("Ready check failed: NOAUTH …").
    if (refusal) return { setting: "REDIS_URL", service: "Redis", message: text.slice(refusal.index), code: refusal[1]! };
    const redirect = REDIS_CLUSTER_REDIRECT.exec(text);
    if (redirect) return { setting: "REDIS_URL", service: "Redis", message: `${redirect[0]} (${CLUSTER_NOT_SUPPORTED})`, code: redirect[1]! };
  }
  return undefined;
}

/** What the server refused, in a sentence (and what to do, where its words do not say): for the logs (/readyz names only the service: readiness.ts). */
export function describeRefusal(found: Misconfiguration): string {
  const what = refusedWhat(found);
  const code = found.service === "PostgreSQL" ? ` (${found.code})` : "";
  const remedy = found.service === "PostgreSQL" ? REMEDIES[found.code] : undefined;
  return `${found.service} refused ${what}: ${found.message}${code}${remedy ? `; ${remedy}` : ""}`;
}

/** What the server refused: a command (a right the user lacks, a key a cluster node sends elsewhere) or the connection. */
export function refusedWhat(found: Misconfiguration): string {
  return ["NOPERM", "MOVED", "ASK"].includes(found.code) ? "a command" : "the connection";
}

/** Whether the refusal is a Redis Cluster node's redirect (REDIS_URL leads to a cluster). */
export const isClusterRedirect = (found: Misconfiguration): boolean => found.code === "MOVED" || found.code === "ASK";

/** An error in a few words for an operator: its message and code (a connect error's message may be empty). */
export function errorSummary(error: unknown): string {
  const { code, message, errors } = (error ?? {}) as { code?: unknown; message?: unknown; errors?: unknown };
  const first = Array.isArray(errors) ? (errors[0] as { message?: unknown } | undefined)?.message : undefined;
  const text = [message, first].find((candidate) => typeof candidate === "string" && candidate !== "") as string | undefined;
  const codeText = typeof code === "string" || typeof code === "number" ? String(code) : undefined;
  if (text && codeText && !text.includes(codeText)) return `${text} (${codeText})`;
  return text ?? codeText ?? String(error);
}

type ChainLink = { code?: unknown; name?: unknown; message?: unknown };

/** The error and its causes, each once. */
function errorChain(error: unknown): ChainLink[] {
  const chain: ChainLink[] = [];
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    chain.push(current as ChainLink);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}
