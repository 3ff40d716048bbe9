// The only reader of process.env. Every variable is parsed and checked once, at start,
// so a typo stops the process with a line that names the variable instead of failing
// later on the first request that needs it.
import { parseDuration, parseDurationList } from "./duration.ts";
import {
  basicAuthUser,
  boolean,
  explorerTxUrl,
  explorerAddressUrl,
  cidr,
  isLoopbackHost,
  commaList,
  countryCodes,
  durationBetween,
  queuePrefix,
  integerIn,
  listenHost,
  matching,
  headerValue,
  listenPort,
  minLength,
  oneMailbox,
  oneOf,
  redisUrl,
  statusCallbackUrl,
  trimmedEnds,
  urlWithScheme,
  workerQueues,
} from "./config-parsers.ts";

export type Config = Readonly<{
  databaseUrl: string;
  /**
   * The most PostgreSQL connections one process (an API or a worker) opens. Every process
   * counts against the server's max_connections (and the role's CONNECTION LIMIT).
   */
  databasePoolSize: number;
  redisUrl: string;
  port: number;
  host: string;
  jwt: Readonly<{
    secret: string | undefined;
    /**
     * JWT_SECRET_PREVIOUS: a second HS256 secret that tokens may be signed with during a rotation;
     * never signed with. Optional, so that a verifier set up by hand (a test) need not name it.
     */
    previousSecret?: string | undefined;
    jwksUrl: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
    /**
     * The oldest a token may be, by its `iat`, in milliseconds (jose's maxTokenAge); undefined:
     * no cap beyond its own `exp`. Optional, so that a verifier set up by hand (a test) need not name it.
     */
    maxTokenAgeMs?: number | undefined;
  }>;
  smtpUrl: string | undefined;
  /**
   * EMAIL_TRANSPORT as set: `outbox` writes each email to an .eml file instead of sending it (the
   * demo, tests), `smtp` insists on SMTP_URL. Unset: SMTP when SMTP_URL is set, else email is
   * off (notify/transports.ts). Optional, so that a config built by hand (a test) need not name it.
   */
  emailTransport?: EmailTransport | undefined;
  emailFrom: string;
  /** A transaction's page on a block explorer, `{signature}` standing for its signature, linked from each alert email; undefined: no link. */
  explorerTxUrl: string | undefined;
  /** An account's page on a block explorer, `{address}` standing for its address, linked from each alert email for the wallet and the counterparty; undefined: no link. */
  explorerAddressUrl: string | undefined;
  twilio: Readonly<{
    accountSid: string | undefined;
    authToken: string | undefined;
    /**
     * TWILIO_AUTH_TOKEN_PREVIOUS, during a rotation: the token being replaced. A status callback
     * signed with it is taken as well (Twilio signs them with its primary token, which stays the
     * old one until the new one is promoted); nothing is sent with it. Optional, so that a config
     * built by hand (a test) need not name it.
     */
    previousAuthToken?: string | undefined;
    from: string | undefined;
    baseUrl: string;
    /**
     * The public URL at which Twilio reaches POST /v1/callbacks/twilio/sms-status with each
     * SMS's carrier status; also the URL its signatures are computed over. Off when unset.
     */
    statusCallbackUrl: string | undefined;
  }>;
  /** SMS_TRANSPORT as set: `log` logs each SMS instead of sending it, `twilio` insists on TWILIO_*; unset: Twilio when configured, else SMS is off. */
  smsTransport?: SmsTransport | undefined;
  /**
   * The countries (ISO 3166-1 alpha-2, upper case) whose numbers SMS alerts may text, checked when
   * an alert is created or changed and before every send; undefined: every country.
   */
  smsAllowedCountries: readonly string[] | undefined;
  webhookAllowHttp: boolean;
  webhookAllowedCidrs: readonly string[];
  /** Delays in milliseconds before the 2nd, 3rd, … delivery attempt. */
  retryScheduleMs: readonly number[];
  workerQueues: readonly string[] | "all";
  /**
   * How many transactions one evaluation takes on at most when batches are waiting: larger
   * groups evaluate a backlog faster (fewer distinct addresses per transaction) and hold more
   * in a worker's memory.
   */
  evaluationGroupTransactions: number;
  /** How long an evaluation waits for earlier batches held elsewhere to be counted (and committed, before it reads scores), before going on without them. */
  evaluationOrderWaitMs: number;
  heliusAuthHeader: string | undefined;
  /**
   * HELIUS_AUTH_HEADER_PREVIOUS, during a rotation: the auth header Helius may still send until
   * its webhook is changed, accepted beside HELIUS_AUTH_HEADER. Optional, as above.
   */
  previousHeliusAuthHeader?: string | undefined;
  /** previousPassword: ADMIN_PASSWORD_PREVIOUS, during a rotation, accepted beside the password (optional, as above). */
  admin: Readonly<{ user: string | undefined; password: string | undefined; previousPassword?: string | undefined }>;
  /**
   * Where a worker process serves its probes (/healthz, /readyz) and, with the admin credentials,
   * its own /metrics (job durations); off when unset. Read for a worker only (undefined for the API).
   */
  workerMetricsPort: number | undefined;
  /**
   * How long the API, on SIGTERM, goes on serving with /readyz answering 503 before it stops
   * accepting connections: the time a load balancer takes to stop sending it requests.
   */
  shutdownDelayMs: number;
  rateLimitPerMinute: number;
  /** risk_alert.test notifications a caller may send per clock hour (0: none). */
  testNotificationsPerHour: number;
  /** Failed notifications a caller may send again (POST …/redeliver) per clock hour (0: none). */
  redeliveriesPerHour: number;
  /**
   * SMS notifications of one caller's alerts (a test and a redelivery included) sent per clock
   * hour: the operator pays for each, and firings are not capped, so without it one token's
   * alerts on a busy address could send thousands an hour. Past it they fail, not sent (sms-budget.ts).
   */
  smsPerCallerPerHour: number;
  /**
   * Email notifications of one caller's alerts (a test and a redelivery included) sent per clock
   * hour: they all leave through the operator's one SMTP account, which a provider throttles or
   * suspends past its own limits, stopping every caller's email. Past it they fail, not sent
   * (email-budget.ts).
   */
  emailPerCallerPerHour: number;
  /**
   * The most alerts (of any status: a paused one can be resumed) one caller may have on one
   * wallet, and in all: each active alert is a notification per matching event and a rule held
   * in every worker's memory, so an unbounded number would let one token multiply both.
   */
  maxAlertsPerWallet: number;
  /**
   * 40,000 by default: four alerts (one of each condition) on each of a full book of
   * MAX_WALLETS_PER_CALLER (10,000) wallets. At 10,000 a caller allowed 10,000 wallets could not
   * give each even two, and a fund onboarding 5,000 wallets with 2–4 alerts each stopped at a third.
   */
  maxAlertsPerCaller: number;
  /**
   * The most wallets one caller may track: every tracked address costs every evaluation work
   * (its activity counters, its score), so an unbounded number would let one token slow the
   * pipeline for everyone.
   */
  maxWalletsPerCaller: number;
  /** How long a GET /v1/wallets page may be served from this process's memory (0: never). */
  walletListCacheMs: number;
  /**
   * How long the API works on a request (from its handler's start) before answering it 503: a
   * PostgreSQL that stops answering raises no error, and the request would wait with it.
   */
  requestTimeoutMs: number;
  /**
   * INGEST_CONCURRENCY: the most ingest requests one API process stores at once (the rest wait
   * briefly for a turn, then are refused unstored: http/ingest-admission.ts). Unset: below
   * DATABASE_POOL_SIZE by two, so that reads always find a connection. Optional, so that a
   * config built by hand (a test) need not name it.
   */
  ingestConcurrency?: number | undefined;
  /**
   * How long a client may take to send a whole request (request line, headers and body) before
   * the connection is closed: a body trickled in a byte at a time would otherwise hold it open
   * for as long as the client likes.
   */
  requestReceiveTimeoutMs: number;
  logLevel: string;
  queuePrefix: string;
}>;

/** How email leaves: through SMTP_URL, or into .eml files that nobody receives (an opt-in). */
export type EmailTransport = "smtp" | "outbox";
/** How SMS leave: through Twilio, or into the worker's log, unsent (an opt-in). */
export type SmsTransport = "twilio" | "log";

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
export const DEFAULT_RETRY_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";
export const DEFAULT_EXPLORER_TX_URL = "https://solscan.io/tx/{signature}";
export const DEFAULT_EXPLORER_ADDRESS_URL = "https://solscan.io/account/{address}";
/** A Redis Cluster hash tag: BullMQ's scripts need a queue's keys in one slot. */
const DEFAULT_QUEUE_PREFIX = "{wallet-alerts}";

/** worker: reads what only a worker process uses (its probe and metrics port) as well. */
export function loadConfig(env: Env = process.env, options: { worker?: boolean } = {}): Config {
  const problems: string[] = [];
  const read = <T>(name: string, parse: (raw: string) => T, fallback?: T): T => {
    const raw = env[name];
    if (raw === undefined || raw === "") {
      if (fallback !== undefined) return fallback;
      problems.push(`${name} is required${exampleOf(name)}`);
      return undefined as T;
    }
    try {
      return parse(raw);
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
      return undefined as T;
    }
  };
  const optional = <T>(name: string, parse: (raw: string) => T): T | undefined =>
    env[name] === undefined || env[name] === "" ? undefined : read(name, parse);

  const config = {
    databaseUrl: read("DATABASE_URL", urlWithScheme(["postgres:", "postgresql:"])),
    // From 2: an evaluation reads through the pool beside its own open transaction, so a worker
    // with one connection would wait for itself on its first group.
    databasePoolSize: read("DATABASE_POOL_SIZE", integerIn(2, 1000), 10),
    redisUrl: read("REDIS_URL", redisUrl),
    port: read("PORT", integerIn(0, 65535), 3000),
    host: read("HOST", listenHost, "0.0.0.0"),
    jwt: {
      secret: optional("JWT_SECRET", trimmedEnds(jwtSecret)),
      previousSecret: optional("JWT_SECRET_PREVIOUS", trimmedEnds(jwtSecret)),
      jwksUrl: optional("JWT_JWKS_URL", urlWithScheme(["https:", "http:"])),
      issuer: optional("JWT_ISSUER", (v) => v),
      audience: optional("JWT_AUDIENCE", (v) => v),
      // Below a minute the 30 s clock tolerance is most of it; a year is no cap anyone needs.
      maxTokenAgeMs: optional("JWT_MAX_TOKEN_AGE", durationBetween(60_000, 8_760 * 3_600_000)),
    },
    smtpUrl: optional("SMTP_URL", urlWithScheme(["smtp:", "smtps:"])),
    emailTransport: optional("EMAIL_TRANSPORT", oneOf(["smtp", "outbox"]) as (raw: string) => EmailTransport),
    emailFrom: read("EMAIL_FROM", oneMailbox, "wallet-alerts <alerts@localhost>"),
    // Set empty, no link (unset: the default): a desk may not want its alerts to point at a third party.
    explorerTxUrl: env.EXPLORER_TX_URL === "" ? undefined : read("EXPLORER_TX_URL", explorerTxUrl, DEFAULT_EXPLORER_TX_URL),
    explorerAddressUrl: env.EXPLORER_ADDRESS_URL === "" ? undefined : read("EXPLORER_ADDRESS_URL", explorerAddressUrl, DEFAULT_EXPLORER_ADDRESS_URL),
    twilio: {
      accountSid: optional("TWILIO_ACCOUNT_SID", matching(/^AC[0-9a-fA-F]{32}$/, "AC followed by 32 hex digits")),
      authToken: optional("TWILIO_AUTH_TOKEN", (v) => v),
      previousAuthToken: optional("TWILIO_AUTH_TOKEN_PREVIOUS", (v) => v),
      from: optional("TWILIO_FROM", matching(/^\+[1-9]\d{1,14}$/, "an E.164 number such as +14155552671")),
      baseUrl: read("TWILIO_BASE_URL", urlWithScheme(["https:", "http:"]), "https://api.twilio.com"),
      statusCallbackUrl: optional("TWILIO_STATUS_CALLBACK_URL", statusCallbackUrl(env.WEBHOOK_ALLOW_HTTP === "true")),
    },
    smsTransport: optional("SMS_TRANSPORT", oneOf(["twilio", "log"]) as (raw: string) => SmsTransport),
    smsAllowedCountries: optional("SMS_ALLOWED_COUNTRIES", countryCodes),
    webhookAllowHttp: read("WEBHOOK_ALLOW_HTTP", boolean, false),
    webhookAllowedCidrs: read("WEBHOOK_ALLOWED_CIDRS", commaList(cidr), []),
    retryScheduleMs: read("RETRY_SCHEDULE", parseDurationList, parseDurationList(DEFAULT_RETRY_SCHEDULE)),
    workerQueues: read("WORKER_QUEUES", workerQueues, "all" as const),
    evaluationGroupTransactions: read("EVALUATION_GROUP_TRANSACTIONS", integerIn(1, 1_000_000), 10_000),
    // Up to 2 minutes: a worker waiting holds the batches it claimed, and their alerts, that
    // long behind a hung one; "5h" typed for "5s" held them for hours without a word.
    evaluationOrderWaitMs: read("EVALUATION_ORDER_WAIT", durationBetween(0, 120_000), 5_000),
    heliusAuthHeader: optional("HELIUS_AUTH_HEADER", headerValue(16)),
    previousHeliusAuthHeader: optional("HELIUS_AUTH_HEADER_PREVIOUS", headerValue(16)),
    admin: {
      user: optional("ADMIN_USER", trimmedEnds(basicAuthUser)),
      // Bull Board can retry and delete jobs, and nothing slows down guesses of a Basic password:
      // long enough that guessing is hopeless (16 characters; 8 were accepted until 2026-11-27).
      password: optional("ADMIN_PASSWORD", trimmedEnds(minLength(16))),
      previousPassword: optional("ADMIN_PASSWORD_PREVIOUS", trimmedEnds(minLength(16))),
    },
    // Only the worker serves that port: an API sharing the worker's settings (one env file, one
    // ConfigMap, a Kubernetes service link) was refused for a setting it never reads.
    workerMetricsPort: options.worker ? optional("WORKER_METRICS_PORT", listenPort) : undefined,
    // Up to a minute: endpoints are taken out within seconds; more only slows every rollout.
    shutdownDelayMs: read("SHUTDOWN_DELAY", durationBetween(0, 60_000), 0),
    rateLimitPerMinute: read("RATE_LIMIT_PER_MINUTE", integerIn(1, 10_000_000), 600),
    testNotificationsPerHour: read("TEST_NOTIFICATIONS_PER_HOUR", integerIn(0, 1_000_000), 20),
    redeliveriesPerHour: read("REDELIVERIES_PER_HOUR", integerIn(0, 1_000_000), 1_000),
    // From 1: 0 would read as "none" beside the two settings above, and as "no bound" to others;
    // a million an hour is no bound in practice (ten sends in flight per worker process).
    smsPerCallerPerHour: read("SMS_PER_CALLER_PER_HOUR", integerIn(1, 1_000_000), 300),
    emailPerCallerPerHour: read("EMAIL_PER_CALLER_PER_HOUR", integerIn(1, 1_000_000), 1_000),
    maxAlertsPerWallet: read("MAX_ALERTS_PER_WALLET", integerIn(1, 1_000_000), 50),
    maxAlertsPerCaller: read("MAX_ALERTS_PER_CALLER", integerIn(1, 1_000_000), 40_000),
    maxWalletsPerCaller: read("MAX_WALLETS_PER_CALLER", integerIn(1, 1_000_000), 10_000),
    walletListCacheMs: read("WALLET_LIST_CACHE_TTL", parseDuration, 1_000),
    // Well above the slowest legitimate request (a label import that rescores: 1.5 s for 10,000
    // labels over 500 wallets and 150,000 transactions); below a second is a unit typed wrong.
    requestTimeoutMs: read("REQUEST_TIMEOUT", durationBetween(1_000, 300_000), 10_000),
    ingestConcurrency: optional("INGEST_CONCURRENCY", integerIn(1, 999)),
    // A full 10 MiB ingest body (the largest accepted) at 0.7 Mbit/s, a slow uplink; a client
    // that sends slower than that has to send smaller batches.
    requestReceiveTimeoutMs: read("REQUEST_RECEIVE_TIMEOUT", durationBetween(1_000, 1_800_000), 120_000),
    logLevel: read("LOG_LEVEL", oneOf(LOG_LEVELS), "info"),
    queuePrefix: read("QUEUE_PREFIX", queuePrefix, DEFAULT_QUEUE_PREFIX),
  };

  // postgres.js reads a pool size from the URL's query too, but the pool is always given
  // DATABASE_POOL_SIZE: the URL's would be ignored while the operator believes it in force.
  if (config.databaseUrl && new URL(config.databaseUrl).searchParams.has("max"))
    problems.push("DATABASE_URL: ?max= is not read: set the pool's size with DATABASE_POOL_SIZE (default 10) and remove max from the URL");
  // Ingest holding every connection of the pool left reads and probes none (they waited seconds behind it).
  if (config.ingestConcurrency !== undefined && config.databasePoolSize !== undefined && config.ingestConcurrency >= config.databasePoolSize)
    problems.push(
      `INGEST_CONCURRENCY (${config.ingestConcurrency}) must be below DATABASE_POOL_SIZE (${config.databasePoolSize}): ingest would hold every connection and leave reads none; lower it or raise DATABASE_POOL_SIZE`,
    );
  // Only when neither was given: one given and refused has its own problem above already.
  if (!env.JWT_SECRET && !env.JWT_JWKS_URL) problems.push("JWT_SECRET or JWT_JWKS_URL is required");
  // The API takes one family of tokens; with both set, HS256 tokens (npm run token's) would be
  // refused while the operator believes JWT_SECRET is in use.
  if (config.jwt.secret && config.jwt.jwksUrl)
    problems.push("JWT_SECRET and JWT_JWKS_URL exclude each other: set JWT_SECRET for HS256 tokens or JWT_JWKS_URL for RS256/ES256 ones");
  // A second HS256 secret, for a rotation's window: beside a JWKS it would be ignored (a
  // provider publishes its old and new keys itself), and alone it would be the only secret
  // while named the previous one. Given but refused (too short), it has its own problem above.
  if (env.JWT_SECRET_PREVIOUS && env.JWT_JWKS_URL)
    problems.push("JWT_SECRET_PREVIOUS goes with JWT_SECRET, not JWT_JWKS_URL: an identity provider's JWKS lists its old and new keys itself");
  else if (env.JWT_SECRET_PREVIOUS && !env.JWT_SECRET)
    problems.push("JWT_SECRET_PREVIOUS needs JWT_SECRET: it is the secret being replaced, accepted beside JWT_SECRET, never signed with");
  if (config.jwt.previousSecret && config.jwt.previousSecret === config.jwt.secret)
    problems.push("JWT_SECRET_PREVIOUS is the same as JWT_SECRET: set it to the secret being replaced, or unset it");
  // An identity provider's keys sign the tokens of every application and tenant it serves (Entra
  // ID's common keys, a shared Auth0 tenant): without an issuer and an audience to match, a token
  // minted for someone else's app, with a scope it happens to call `admin`, would be taken here.
  if (config.jwt.jwksUrl && (!config.jwt.issuer || !config.jwt.audience))
    problems.push(
      "JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE: the provider's keys also sign other applications' tokens, which only those tell apart",
    );
  // Keys fetched in the clear can be swapped on the way; only this machine's own loopback is exempt.
  if (config.jwt.jwksUrl && new URL(config.jwt.jwksUrl).protocol === "http:" && !isLoopbackHost(new URL(config.jwt.jwksUrl).hostname))
    problems.push("JWT_JWKS_URL: https is required (http only on loopback): keys fetched in the clear can be replaced on the way");
  // Only when none was given: one given and refused (too short) has its own problem above already.
  if (config.admin.user && !env.ADMIN_PASSWORD) problems.push("ADMIN_PASSWORD is required with ADMIN_USER");
  // A password alone turned nothing on (the admin surfaces answer 404 without a user), without
  // a word: Prometheus's scrapes then failed for a reason hard to see. Only when none was given:
  // one given and refused has its own problem above already.
  if (config.admin.password && !env.ADMIN_USER)
    problems.push("ADMIN_USER is required with ADMIN_PASSWORD: /metrics and /admin/queues are served only with both (unset both to turn them off)");
  // A value accepted beside the current one while it is rotated (routes/helius.ts,
  // routes/twilio-status-callback.ts, metrics/basic-auth.ts): each is checked against the value it stands beside.
  for (const problem of [
    previousValueProblem(env, "HELIUS_AUTH_HEADER", config.heliusAuthHeader, config.previousHeliusAuthHeader),
    previousValueProblem(env, "TWILIO_AUTH_TOKEN", config.twilio.authToken, config.twilio.previousAuthToken),
    previousValueProblem(env, "ADMIN_PASSWORD", config.admin.password, config.admin.previousPassword),
  ]) {
    if (problem) problems.push(problem);
  }
  const twilioSet = [config.twilio.accountSid, config.twilio.authToken, config.twilio.from].filter(Boolean).length;
  if (twilioSet > 0 && twilioSet < 3)
    problems.push("TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM go together: set all three or none");
  // Without the auth token no callback's signature can be checked, and without the account no
  // SMS asks for one: the route would refuse or never hear anything.
  if (config.twilio.statusCallbackUrl && twilioSet < 3)
    problems.push("TWILIO_STATUS_CALLBACK_URL needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM: callbacks are signed with the auth token");
  // The fallbacks are asked for by name, never taken for a missing or misspelled setting: an
  // alert written to a file or a log line reaches nobody (they were the silent default until
  // 2026-11-28). Each name is checked against the settings it stands for.
  if (config.emailTransport === "smtp" && !env.SMTP_URL)
    problems.push("EMAIL_TRANSPORT=smtp needs SMTP_URL (for example smtp://user:pass@smtp.example.com:587)");
  if (config.emailTransport === "outbox" && env.SMTP_URL)
    problems.push("EMAIL_TRANSPORT=outbox and SMTP_URL exclude each other: outbox writes email to .eml files instead of sending it; unset one");
  if (config.smsTransport === "twilio" && twilioSet === 0)
    problems.push("SMS_TRANSPORT=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM");
  if (config.smsTransport === "log" && twilioSet > 0)
    problems.push("SMS_TRANSPORT=log and TWILIO_* exclude each other: log writes SMS to the worker's log instead of sending them; unset one");

  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  return deepFreeze(config) as Config;
}

/**
 * What is wrong with a `<name>_PREVIOUS` (the value being replaced, accepted beside `<name>`
 * during a rotation), if anything. Without `<name>` there is nothing it could stand beside (only
 * when `<name>` was not given: one given and refused has its own problem already). Equal to it,
 * it is no rotation: most likely the new value pasted into both, the old one then refused by every process.
 * Neither value is ever put in the message.
 */
function previousValueProblem(env: Env, name: string, current: string | undefined, previous: string | undefined): string | undefined {
  if (previous === undefined) return undefined;
  if (!env[name]) return `${name}_PREVIOUS needs ${name}: it is the old value, accepted beside ${name} (the new one) during a rotation`;
  if (previous === current) {
    return `${name}_PREVIOUS is the same as ${name}: set it to the old value being replaced (and ${name} to the new one), or unset it when no rotation is under way`;
  }
  return undefined;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Secrets shipped in this repository, which anyone can read: a JWT_SECRET that is one of them lets
 * anyone mint any caller's token, `admin` scope included. The compose file's development default
 * is not here (compose runs with it, on loopback, as the README says); .env.example's placeholder
 * is, because `cp .env.example .env` carried it into compose and into the processes unnoticed.
 */
const PUBLIC_JWT_SECRETS = new Set(["change-me-to-32-or-more-random-characters"]);

function jwtSecret(raw: string): string {
  minLength(32)(raw);
  if (PUBLIC_JWT_SECRETS.has(raw))
    throw new Error("this is the placeholder from .env.example, which anyone can read: generate a secret, e.g. openssl rand -base64 48");
  return raw;
}

/** The settings that say how tokens are signed and checked. */
const JWT_SETTINGS = ["JWT_SECRET", "JWT_SECRET_PREVIOUS", "JWT_JWKS_URL", "JWT_ISSUER", "JWT_AUDIENCE", "JWT_MAX_TOKEN_AGE"] as const;

/**
 * For the commands that mint tokens (token, simulate, the demo), which need the signing
 * settings and nothing else: only those are read, so a setting kept for the service (a PORT,
 * an SMTP_URL) is not theirs to refuse.
 */
export function loadJwtConfig(env: Env = process.env): Config["jwt"] {
  const jwtOnly = Object.fromEntries(JWT_SETTINGS.map((name) => [name, env[name]]));
  return loadConfig({ DATABASE_URL: "postgres://unused", REDIS_URL: "redis://unused", ...jwtOnly }).jwt;
}

/**
 * For `npm run queues`, which reads Redis and nothing else: a monitoring host needs neither
 * the database URL nor the token secret to count jobs, and the settings it keeps for other
 * programs (a PORT, a secret of another length) are not this command's to refuse.
 */
export function loadQueuesConfig(env: Env = process.env): Pick<Config, "redisUrl" | "queuePrefix"> {
  return { redisUrl: urlAlone(env, "REDIS_URL", redisUrl), queuePrefix: env.QUEUE_PREFIX || DEFAULT_QUEUE_PREFIX };
}

/** For commands that need the database and nothing else (migrate). */
export function loadDatabaseUrl(env: Env = process.env): string {
  return urlAlone(env, "DATABASE_URL", urlWithScheme(["postgres:", "postgresql:"]));
}

/**
 * npm run migrate's: the database, and how long one of its statements may wait for a table's
 * lock. Queued behind an old process's open transaction, a migration's ALTER TABLE made every
 * later read and write of that table queue behind it in turn; bounded, it gives way and tries
 * again (src/db/migrate.ts). 0: wait as long as it takes.
 */
export function loadMigrateSettings(env: Env = process.env): { databaseUrl: string; lockTimeoutMs: number } {
  const databaseUrl = loadDatabaseUrl(env);
  const raw = env.MIGRATION_LOCK_TIMEOUT;
  if (raw === undefined || raw === "") return { databaseUrl, lockTimeoutMs: DEFAULT_MIGRATION_LOCK_TIMEOUT_MS };
  try {
    return { databaseUrl, lockTimeoutMs: durationBetween(0, 600_000)(raw) };
  } catch (error) {
    throw new ConfigError(`invalid configuration: MIGRATION_LOCK_TIMEOUT: ${(error as Error).message}`);
  }
}

export const DEFAULT_MIGRATION_LOCK_TIMEOUT_MS = 5_000;

/** What a required setting looks like on a machine that runs everything locally, for its "is required". */
const EXAMPLES: Readonly<Record<string, string>> = {
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/wallet_alerts",
  REDIS_URL: "redis://127.0.0.1:6379",
};

const exampleOf = (name: string): string => (EXAMPLES[name] ? ` (for example ${EXAMPLES[name]})` : "");

/** One URL setting read on its own, for commands that need nothing else. */
function urlAlone(env: Env, name: string, parse: (raw: string) => string): string {
  const raw = env[name];
  if (!raw) throw new ConfigError(`invalid configuration: ${name} is required${exampleOf(name)}`);
  try {
    return parse(raw);
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${name}: ${(error as Error).message}`);
  }
}
