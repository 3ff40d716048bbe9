// Which errors mean "the backing service cannot serve us now" (503, logged once a minute), and
// which of those mean that a setting is wrong (the process stops at start and says which).
import { describe, expect, it } from "vitest";
import { describeRefusal, errorSummary, isUnavailableError, misconfiguredSetting } from "../../src/dependency-errors.ts";

/** As postgres.js reports a server's refusal: a PostgresError with the SQLSTATE as code. */
const postgresError = (code: string, message: string) => Object.assign(new Error(message), { name: "PostgresError", code, severity: "FATAL" });
/** As ioredis reports a reply error, with the command (and its arguments) attached. */
const replyError = (message: string, command = { name: "auth", args: ["wrongpw"] }) =>
  Object.assign(new Error(message), { name: "ReplyError", command });

describe("misconfiguredSetting", () => {
  it.each([
    ["28P01", 'password authentication failed for user "app"'],
    ["28000", 'role "nobody" does not exist'],
    ["28000", 'no pg_hba.conf entry for host "10.0.0.5", user "app", database "app", no encryption'],
    ["3D000", 'database "wallet_alertz" does not exist'],
    // The server's connections (or the role's) are all taken: not an outage, a pool too large for them.
    ["53300", "sorry, too many clients already"],
    ["53300", 'too many connections for role "app"'],
  ])("names DATABASE_URL for PostgreSQL's %s, with the server's words", (code, message) => {
    expect(misconfiguredSetting(postgresError(code, message))).toEqual({ setting: "DATABASE_URL", service: "PostgreSQL", message, code });
  });

  it.each([
    ["WRONGPASS invalid username-password pair or user is disabled.", "WRONGPASS"],
    ["NOAUTH Authentication required.", "NOAUTH"],
    ["NOPERM this user has no permissions to run the 'evalsha' command", "NOPERM"],
  ])("names REDIS_URL for Redis's %s", (message, code) => {
    expect(misconfiguredSetting(replyError(message))).toEqual({ setting: "REDIS_URL", service: "Redis", message, code });
  });

  it("finds the refusal behind ioredis's ready-check prefix and behind a wrapping error's cause", () => {
    expect(misconfiguredSetting(new Error("Ready check failed: NOAUTH Authentication required."))).toMatchObject({
      setting: "REDIS_URL",
      message: "NOAUTH Authentication required.",
    });
    const wrapped = new Error("Failed query: select 1", { cause: postgresError("3D000", 'database "x" does not exist') });
    expect(misconfiguredSetting(wrapped)).toMatchObject({ setting: "DATABASE_URL", code: "3D000" });
  });

  it.each([
    ["a refused connection", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" })],
    ["a connect timeout", Object.assign(new Error("write CONNECT_TIMEOUT 127.0.0.1:5432"), { code: "CONNECT_TIMEOUT" })],
    ["a server shutting down", postgresError("57P01", "terminating connection due to administrator command")],
    ["a read-only transaction", postgresError("25006", "cannot execute INSERT in a read-only transaction")],
    ["a unique violation", postgresError("23505", "duplicate key value violates unique constraint")],
    ["a Redis reply that is not a refusal", replyError("ERR unknown command 'FOO'")],
    ["nothing", undefined],
  ])("is undefined for %s: waiting (or a code fix) helps there", (_name, error) => {
    expect(misconfiguredSetting(error)).toBeUndefined();
  });
});

describe("isUnavailableError", () => {
  it.each([
    ["PostgreSQL refusing the password", postgresError("28P01", 'password authentication failed for user "app"')],
    ["an unknown role", postgresError("28000", 'role "nobody" does not exist')],
    ["an unknown database", postgresError("3D000", 'database "x" does not exist')],
    ["a PostgreSQL with no connection left", postgresError("53300", "sorry, too many clients already")],
    ["a read-only PostgreSQL", postgresError("25006", "cannot execute INSERT in a read-only transaction")],
    ["Redis refusing the password", replyError("WRONGPASS invalid username-password pair or user is disabled.")],
    ["Redis wanting a password", replyError("NOAUTH Authentication required.")],
    ["a Redis user without the right", replyError("NOPERM this user has no permissions to run the 'evalsha' command")],
    ["a refused connection", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" })],
    ["a Redis loading its dataset after a restart", replyError("LOADING Redis is loading the dataset in memory", { name: "evalsha", args: [] })],
    ["a Redis replica refusing writes during a failover", replyError("READONLY You can't write against a read only replica.", { name: "evalsha", args: [] })],
    ["a replica whose link to its master is down", replyError("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", { name: "get", args: [] })],
    ["a cluster moving a slot", replyError("TRYAGAIN Multiple keys request during rehashing of slot", { name: "evalsha", args: [] })],
    ["a cluster without its quorum", replyError("CLUSTERDOWN The cluster is down", { name: "get", args: [] })],
  ])("is true for %s: the client can do nothing about it (503)", (_name, error) => {
    expect(isUnavailableError(error)).toBe(true);
  });

  it.each([
    ["a unique violation", postgresError("23505", "duplicate key value violates unique constraint")],
    ["a Redis reply that is not a refusal", replyError("ERR unknown command 'FOO'")],
    ["a bug", new TypeError("cannot read properties of undefined")],
  ])("is false for %s", (_name, error) => {
    expect(isUnavailableError(error)).toBe(false);
  });
});

describe("describeRefusal and errorSummary", () => {
  it("says what the server refused, with PostgreSQL's code", () => {
    expect(describeRefusal(misconfiguredSetting(postgresError("3D000", 'database "x" does not exist'))!)).toBe(
      'PostgreSQL refused the connection: database "x" does not exist (3D000)',
    );
    expect(describeRefusal(misconfiguredSetting(replyError("NOAUTH Authentication required."))!)).toBe(
      "Redis refused the connection: NOAUTH Authentication required.",
    );
    expect(describeRefusal(misconfiguredSetting(replyError("NOPERM this user has no permissions to run the 'ping' command"))!)).toBe(
      "Redis refused a command: NOPERM this user has no permissions to run the 'ping' command",
    );
  });

  it("says what to do when PostgreSQL has no connection left: the server's words name the limit, not the pool behind it", () => {
    expect(describeRefusal(misconfiguredSetting(postgresError("53300", 'too many connections for role "app"'))!)).toBe(
      'PostgreSQL refused the connection: too many connections for role "app" (53300); run fewer processes or a smaller ' +
        "DATABASE_POOL_SIZE (each process opens up to that many connections), or raise max_connections or the role's (or database's) CONNECTION LIMIT",
    );
  });

  it("gives a connect error's message and code, also when Node's message is empty (every address refused)", () => {
    expect(errorSummary(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }))).toBe(
      "connect ECONNREFUSED 127.0.0.1:5432",
    );
    const everyAddress = Object.assign(new AggregateError([new Error("connect ECONNREFUSED ::1:5432")], ""), { code: "ECONNREFUSED" });
    expect(errorSummary(everyAddress)).toBe("connect ECONNREFUSED ::1:5432");
    expect(errorSummary(postgresError("57P03", "the database system is starting up"))).toBe("the database system is starting up (57P03)");
  });
});
