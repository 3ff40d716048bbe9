// loadConfig: the only reader of the environment. Defaults, parsed values, and one clear
// message per bad variable (all of them at once, so an operator fixes them in one go).
import { describe, expect, it } from "vitest";
import { loadConfig, loadQueuesConfig } from "../../src/config.ts";
import { listenFailure } from "../../src/listen-failure.ts";
import { createBasicAuthCheck } from "../../src/metrics/basic-auth.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

describe("loadConfig", () => {
  it("fills in the documented defaults", () => {
    const config = loadConfig(REQUIRED);
    expect(config).toMatchObject({
      databasePoolSize: 10,
      port: 3000,
      host: "0.0.0.0",
      rateLimitPerMinute: 600,
      testNotificationsPerHour: 20,
      redeliveriesPerHour: 1_000,
      smsPerCallerPerHour: 300,
      emailPerCallerPerHour: 1_000,
      maxAlertsPerWallet: 50,
      maxAlertsPerCaller: 40_000,
      maxWalletsPerCaller: 10_000,
      walletListCacheMs: 1_000,
      workerQueues: "all",
      evaluationGroupTransactions: 10_000,
      evaluationOrderWaitMs: 5_000,
      requestTimeoutMs: 10_000,
      queuePrefix: "{wallet-alerts}",
      logLevel: "info",
      webhookAllowHttp: false,
    });
    expect(config.retryScheduleMs).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("parses the values it is given", () => {
    const config = loadConfig({
      ...REQUIRED,
      PORT: "8080",
      DATABASE_POOL_SIZE: "25",
      WORKER_QUEUES: "transactions, risk",
      EVALUATION_GROUP_TRANSACTIONS: "5000",
      EVALUATION_ORDER_WAIT: "250ms",
      RETRY_SCHEDULE: "500ms,2s,1m",
      WEBHOOK_ALLOW_HTTP: "true",
      WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8,::1/128",
      WALLET_LIST_CACHE_TTL: "0ms",
      REQUEST_TIMEOUT: "1500ms",
      EMAIL_FROM: '"Risk desk, ACME" <alerts@example.com>',
      MAX_ALERTS_PER_WALLET: "1",
      MAX_ALERTS_PER_CALLER: "1000000",
      MAX_WALLETS_PER_CALLER: "1",
      SMS_PER_CALLER_PER_HOUR: "2",
      EMAIL_PER_CALLER_PER_HOUR: "3",
    });
    expect(config).toMatchObject({
      port: 8080,
      databasePoolSize: 25,
      workerQueues: ["transactions", "risk"],
      evaluationGroupTransactions: 5_000,
      evaluationOrderWaitMs: 250,
      retryScheduleMs: [500, 2_000, 60_000],
      webhookAllowHttp: true,
      webhookAllowedCidrs: ["127.0.0.0/8", "::1/128"],
      walletListCacheMs: 0,
      requestTimeoutMs: 1_500,
      emailFrom: '"Risk desk, ACME" <alerts@example.com>',
      maxAlertsPerWallet: 1,
      maxAlertsPerCaller: 1_000_000,
      maxWalletsPerCaller: 1,
      smsPerCallerPerHour: 2,
      emailPerCallerPerHour: 3,
    });
  });

  it.each([
    ["EVALUATION_GROUP_TRANSACTIONS", "0", "EVALUATION_GROUP_TRANSACTIONS: expected a whole number from 1 to 1000000"],
    ["EVALUATION_GROUP_TRANSACTIONS", "1e4", "EVALUATION_GROUP_TRANSACTIONS: expected a whole number from 1 to 1000000"],
    ["PORT", "65536", "PORT: expected a whole number from 0 to 65535"],
    // One connection would deadlock a worker: an evaluation reads through the pool beside its transaction.
    ["DATABASE_POOL_SIZE", "1", "DATABASE_POOL_SIZE: expected a whole number from 2 to 1000"],
    ["DATABASE_POOL_SIZE", "1001", "DATABASE_POOL_SIZE: expected a whole number from 2 to 1000"],
    ["DATABASE_POOL_SIZE", "ten", "DATABASE_POOL_SIZE: expected a whole number from 2 to 1000"],
    ["DATABASE_POOL_SIZE", "2.5", "DATABASE_POOL_SIZE: expected a whole number from 2 to 1000"],
    ["RATE_LIMIT_PER_MINUTE", "-1", "RATE_LIMIT_PER_MINUTE: expected a whole number"],
    // 0 would refuse every create: turning alerts off is not what the caps are for.
    ["MAX_ALERTS_PER_WALLET", "0", "MAX_ALERTS_PER_WALLET: expected a whole number from 1 to 1000000"],
    ["MAX_ALERTS_PER_WALLET", "1000001", "MAX_ALERTS_PER_WALLET: expected a whole number from 1 to 1000000"],
    ["MAX_ALERTS_PER_WALLET", "fifty", "MAX_ALERTS_PER_WALLET: expected a whole number from 1 to 1000000"],
    ["MAX_ALERTS_PER_WALLET", "2.5", "MAX_ALERTS_PER_WALLET: expected a whole number from 1 to 1000000"],
    ["MAX_ALERTS_PER_CALLER", "0", "MAX_ALERTS_PER_CALLER: expected a whole number from 1 to 1000000"],
    ["MAX_ALERTS_PER_CALLER", "-5", "MAX_ALERTS_PER_CALLER: expected a whole number from 1 to 1000000"],
    ["MAX_ALERTS_PER_CALLER", "1e4", "MAX_ALERTS_PER_CALLER: expected a whole number from 1 to 1000000"],
    ["MAX_ALERTS_PER_CALLER", "10,000", "MAX_ALERTS_PER_CALLER: expected a whole number from 1 to 1000000"],
    // 0 would refuse every create: stopping a caller from tracking is the token's scope's job.
    ["MAX_WALLETS_PER_CALLER", "0", "MAX_WALLETS_PER_CALLER: expected a whole number from 1 to 1000000"],
    ["MAX_WALLETS_PER_CALLER", "1000001", "MAX_WALLETS_PER_CALLER: expected a whole number from 1 to 1000000"],
    ["MAX_WALLETS_PER_CALLER", "1e4", "MAX_WALLETS_PER_CALLER: expected a whole number from 1 to 1000000"],
    ["MAX_WALLETS_PER_CALLER", "10,000", "MAX_WALLETS_PER_CALLER: expected a whole number from 1 to 1000000"],
    // 0 would mean "none" beside TEST_NOTIFICATIONS_PER_HOUR=0 and "no bound" to others: refused, not guessed.
    ["SMS_PER_CALLER_PER_HOUR", "0", "SMS_PER_CALLER_PER_HOUR: expected a whole number from 1 to 1000000"],
    ["SMS_PER_CALLER_PER_HOUR", "1000001", "SMS_PER_CALLER_PER_HOUR: expected a whole number from 1 to 1000000"],
    ["SMS_PER_CALLER_PER_HOUR", "300/h", "SMS_PER_CALLER_PER_HOUR: expected a whole number from 1 to 1000000"],
    ["EMAIL_PER_CALLER_PER_HOUR", "0", "EMAIL_PER_CALLER_PER_HOUR: expected a whole number from 1 to 1000000"],
    ["EMAIL_PER_CALLER_PER_HOUR", "1000001", "EMAIL_PER_CALLER_PER_HOUR: expected a whole number from 1 to 1000000"],
    ["EMAIL_PER_CALLER_PER_HOUR", "1000/h", "EMAIL_PER_CALLER_PER_HOUR: expected a whole number from 1 to 1000000"],
    // Nothing slows down guesses of a Basic password, and Bull Board can delete jobs.
    ["ADMIN_PASSWORD", "fifteen-chars-x", "ADMIN_PASSWORD: expected at least 16 characters"],
    ["DATABASE_URL", "mysql://localhost/db", "DATABASE_URL: expected a postgres: or postgresql: URL"],
    ["JWT_SECRET", "short", "JWT_SECRET: expected at least 32 characters"],
    ["LOG_LEVEL", "loud", "LOG_LEVEL: expected one of"],
    ["WEBHOOK_ALLOW_HTTP", "yes", "WEBHOOK_ALLOW_HTTP: expected true or false"],
    ["WEBHOOK_ALLOWED_CIDRS", "localhost", "is not a CIDR range"],
    ["WORKER_QUEUES", " , ", "WORKER_QUEUES: expected all or a comma list of queue names"],
    // Without an address nodemailer sends MAIL FROM:<> and no From header at all.
    ["EMAIL_FROM", "Wallet Alerts", "EMAIL_FROM: expected one address"],
    ["EMAIL_FROM", "alerts", "EMAIL_FROM: expected one address"],
    ["EMAIL_FROM", "Ops <not an address>", "EMAIL_FROM: expected one address"],
    ["EMAIL_FROM", "a@example.com, b@example.com", "EMAIL_FROM: expected one address"],
    // Shaped like ranges but not ranges: the SSRF guard would have dropped them without a word.
    ["WEBHOOK_ALLOWED_CIDRS", "10.0.0.0/33", '"10.0.0.0/33" is not a CIDR range'],
    ["WEBHOOK_ALLOWED_CIDRS", "127.0.0.0/8,300.1.0.0/16", '"300.1.0.0/16" is not a CIDR range'],
    ["WEBHOOK_ALLOWED_CIDRS", "fd00::/129", '"fd00::/129" is not a CIDR range'],
    // A deadline below the slowest legitimate requests would answer them all 503: a unit typed wrong.
    ["REQUEST_TIMEOUT", "500ms", "REQUEST_TIMEOUT: expected a duration from 1s to 5m, such as 10s"],
    ["REQUEST_TIMEOUT", "10m", "REQUEST_TIMEOUT: expected a duration from 1s to 5m, such as 10s"],
    ["REQUEST_TIMEOUT", "10", "REQUEST_TIMEOUT: \"10\" is not a duration such as 500ms, 5s, 5m or 2h"],
    // A listen address names an interface: a host name died at the listen with a stack trace (ENOTFOUND).
    ["HOST", "not-a-host", "HOST: expected an IP address to listen on, such as 0.0.0.0 (every IPv4 interface), :: (every interface) or 127.0.0.1, or localhost"],
    ["HOST", "256.1.1.1", "HOST: expected an IP address to listen on"],
    ["HOST", "127.1", "HOST: expected an IP address to listen on"],
    ["HOST", "api.example.com", "HOST: expected an IP address to listen on"],
    ["HOST", "0.0.0.0:3000", "HOST: expected an IP address to listen on"],
    ["HOST", "[::1]", "HOST: expected an IP address to listen on, such as 0.0.0.0 (every IPv4 interface), :: (every interface) or 127.0.0.1, or localhost (an IPv6 address without its brackets)"],
    // A wait for a hung worker's batches holds the waiting worker's alerts too: "5h" for "5s".
    ["EVALUATION_ORDER_WAIT", "5h", "EVALUATION_ORDER_WAIT: expected a duration from 0s to 2m, such as 10s"],
    ["QUEUE_PREFIX", "   ", "QUEUE_PREFIX: expected a key prefix without spaces, such as {wallet-alerts}"],
    ["QUEUE_PREFIX", "{wallet alerts}", "QUEUE_PREFIX: expected a key prefix without spaces, such as {wallet-alerts}"],
    // HTTP Basic splits user and password at the first colon: this user could never log in.
    ["ADMIN_USER", "ops:team", "ADMIN_USER: expected a user name without a colon"],
  ])("rejects %s=%s with a message naming it", (name, value, message) => {
    expect(problemsOf({ [name]: value })).toContain(message);
  });

  it("trims HELIUS_AUTH_HEADER's ends (a secrets file's newline, which no request could carry) and refuses what no header can carry", () => {
    const secret = "helius-shared-secret-0123456789";
    expect(loadConfig({ ...REQUIRED, HELIUS_AUTH_HEADER: `${secret}\n` }).heliusAuthHeader).toBe(secret);
    expect(loadConfig({ ...REQUIRED, HELIUS_AUTH_HEADER: ` Bearer ${secret} ` }).heliusAuthHeader).toBe(`Bearer ${secret}`);
    expect(() => loadConfig({ ...REQUIRED, HELIUS_AUTH_HEADER: `${secret}é` })).toThrow("HELIUS_AUTH_HEADER: expected printable ASCII only");
    expect(() => loadConfig({ ...REQUIRED, HELIUS_AUTH_HEADER: `${secret}\u0007x` })).toThrow("HELIUS_AUTH_HEADER: expected printable ASCII only");
    expect(() => loadConfig({ ...REQUIRED, HELIUS_AUTH_HEADER: "  short-secret  \n" })).toThrow("HELIUS_AUTH_HEADER: expected at least 16 characters");
  });

  it("says of a JWT_SECRET too short only that, not also that none is set", () => {
    expect(problemsOf({ JWT_SECRET: "short" })).toBe("invalid configuration: JWT_SECRET: expected at least 32 characters");
  });

  it("says a token setting is required when neither JWT_SECRET nor JWT_JWKS_URL is given", () => {
    expect(problemsOf({ JWT_SECRET: "" })).toContain("JWT_SECRET or JWT_JWKS_URL is required");
  });

  it("refuses JWT_SECRET and JWT_JWKS_URL together: the API would take only the JWKS's tokens", () => {
    expect(problemsOf({ JWT_JWKS_URL: "https://auth.example.com/.well-known/jwks.json" })).toContain(
      "JWT_SECRET and JWT_JWKS_URL exclude each other",
    );
  });

  it("refuses JWT_JWKS_URL without JWT_ISSUER and JWT_AUDIENCE: a provider's keys sign other applications' tokens too", () => {
    const jwks = { JWT_SECRET: "", JWT_JWKS_URL: "https://auth.example.com/.well-known/jwks.json" };
    const message = "JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE";
    expect(problemsOf(jwks)).toContain(message);
    expect(problemsOf({ ...jwks, JWT_ISSUER: "https://auth.example.com/" })).toContain(message);
    expect(problemsOf({ ...jwks, JWT_AUDIENCE: "wallet-alerts" })).toContain(message);
    expect(loadConfig({ ...REQUIRED, ...jwks, JWT_ISSUER: "https://auth.example.com/", JWT_AUDIENCE: "wallet-alerts" }).jwt.jwksUrl).toBe(jwks.JWT_JWKS_URL);
  });

  it("refuses a JWT_JWKS_URL over http unless it is this machine's loopback", () => {
    const withUrl = (url: string) => ({ JWT_SECRET: "", JWT_JWKS_URL: url, JWT_ISSUER: "https://auth.example.com/", JWT_AUDIENCE: "wallet-alerts" });
    for (const remote of ["http://auth.example.com/.well-known/jwks.json", "http://keys.localhost/jwks.json"]) {
      expect(problemsOf(withUrl(remote)), remote).toContain("JWT_JWKS_URL: https is required (http only on loopback)");
    }
    for (const loopback of ["http://127.0.0.1:8080/jwks.json", "http://localhost/jwks.json", "http://[::1]:9000/jwks.json"]) {
      expect(loadConfig({ ...REQUIRED, ...withUrl(loopback) }).jwt.jwksUrl, loopback).toBe(loopback);
    }
  });

  it("refuses a pool size in DATABASE_URL's query: the pool takes DATABASE_POOL_SIZE, and the URL's would be ignored", () => {
    expect(problemsOf({ DATABASE_URL: "postgres://app@db.internal:5432/wallet_alerts?max=40" })).toContain(
      "DATABASE_URL: ?max= is not read: set the pool's size with DATABASE_POOL_SIZE (default 10) and remove max from the URL",
    );
    expect(loadConfig({ ...REQUIRED, DATABASE_URL: "postgres://app@db.internal:5432/wallet_alerts?sslmode=require" }).databasePoolSize).toBe(10);
  });

  it("takes an IP address of either family, or localhost, as HOST", () => {
    // 10.99.99.99 is an address, if not this machine's: the listen refuses it, naming HOST (listenFailure below).
    for (const host of ["0.0.0.0", "127.0.0.1", "10.99.99.99", "::", "::1", "fd00::5", "localhost"]) {
      expect(loadConfig({ ...REQUIRED, HOST: host }).host, host).toBe(host);
    }
  });

  it("refuses an ADMIN_USER with a colon, which HTTP Basic could never let in, and takes the password it goes with as usual", () => {
    const password = "a-long-enough-admin-pw";
    expect(problemsOf({ ADMIN_USER: "ops:team", ADMIN_PASSWORD: password })).toBe(
      "invalid configuration: ADMIN_USER: expected a user name without a colon (HTTP Basic splits user and password at the first one, so this user could never log in)",
    );
    // Why: the right credentials, sent as Basic sends them, are read as user "ops" and password "team:…".
    const basic = (user: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
    expect(createBasicAuthCheck({ user: "ops:team", password })(basic("ops:team"))).toBe(false);
    // A colon in the password is fine: only the first one splits.
    expect(loadConfig({ ...REQUIRED, ADMIN_USER: "ops", ADMIN_PASSWORD: `${password}:x` }).admin).toEqual({ user: "ops", password: `${password}:x` });
    expect(createBasicAuthCheck({ user: "ops", password: `${password}:x` })(`Basic ${Buffer.from(`ops:${password}:x`).toString("base64")}`)).toBe(true);
  });

  it("names every bad and missing variable in one error", () => {
    const message = problemsOf({ DATABASE_URL: "", PORT: "x", EVALUATION_GROUP_TRANSACTIONS: "-5" });
    expect(message).toContain("DATABASE_URL is required (for example postgres://postgres@127.0.0.1:5432/wallet_alerts)");
    expect(message).toContain("PORT:");
    expect(message).toContain("EVALUATION_GROUP_TRANSACTIONS:");
  });
});

describe("listenFailure: why a server could not listen, naming the setting to change", () => {
  const where = { portSetting: "PORT", port: 3791, host: "0.0.0.0" } as const;
  const failed = (code: string, message = `listen ${code}`) => Object.assign(new Error(message), { code });

  it("names the port when it is taken or privileged", () => {
    expect(listenFailure(failed("EADDRINUSE"), where)).toEqual({
      setting: "PORT",
      code: "EADDRINUSE",
      message: "PORT 3791: address already in use (EADDRINUSE): another process listens there",
    });
    expect(listenFailure(failed("EACCES"), { ...where, portSetting: "WORKER_METRICS_PORT", port: 80 })).toEqual({
      setting: "WORKER_METRICS_PORT",
      code: "EACCES",
      message: "WORKER_METRICS_PORT 80: permission denied (EACCES): a port below 1024 needs privileges (root, or CAP_NET_BIND_SERVICE): choose one from 1024",
    });
  });

  it("names HOST when no interface has its address", () => {
    expect(listenFailure(failed("EADDRNOTAVAIL"), { ...where, host: "10.99.99.99" })).toEqual({
      setting: "HOST",
      code: "EADDRNOTAVAIL",
      message: "HOST 10.99.99.99: address not available (EADDRNOTAVAIL): no network interface of this machine has that address",
    });
  });

  it("says what the system said of anything else, with both settings", () => {
    expect(listenFailure(failed("EINVAL", "listen EINVAL: invalid argument"), where)).toEqual({
      setting: "PORT",
      code: "EINVAL",
      message: "PORT 3791 on HOST 0.0.0.0: cannot listen: listen EINVAL: invalid argument",
    });
  });
});

describe("loadQueuesConfig (npm run queues)", () => {
  it("reads REDIS_URL and QUEUE_PREFIX and nothing else: other programs' settings on the host are not refused", () => {
    expect(loadQueuesConfig({ REDIS_URL: "redis://10.0.0.5:6379", PORT: "abc", JWT_SECRET: "short" })).toEqual({
      redisUrl: "redis://10.0.0.5:6379",
      queuePrefix: "{wallet-alerts}",
    });
    expect(loadQueuesConfig({ REDIS_URL: "rediss://cache:6380", QUEUE_PREFIX: "{desk-b}" }).queuePrefix).toBe("{desk-b}");
  });

  it("refuses a missing or malformed REDIS_URL, naming it", () => {
    expect(() => loadQueuesConfig({})).toThrow("REDIS_URL is required (for example redis://127.0.0.1:6379)");
    expect(() => loadQueuesConfig({ REDIS_URL: "http://cache:6379" })).toThrow("REDIS_URL: expected a redis: or rediss: URL");
  });
});
