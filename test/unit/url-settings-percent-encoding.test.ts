// A `%` that does not start a percent-escape, in any URL setting: one line naming the setting,
// never the password. The WHATWG parser keeps such a `%`, and postgres.js and ioredis decode the
// user name and password with decodeURIComponent as they connect: the API crashed there with
// `URIError: URI malformed` and a stack trace naming no setting, and `npm run migrate` said only
// "URI malformed".
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, loadDatabaseUrl, loadQueuesConfig } from "../../src/config.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

const SECRET = "ab%zzq";
const NOT_HEX = "the password has a % not followed by two hex digits: percent-encode it (a % is written %25)";

describe("URL settings with a bad percent-escape", () => {
  it.each([
    ["DATABASE_URL", `postgres://app:${SECRET}@127.0.0.1:5432/wallet_alerts`],
    ["REDIS_URL", `redis://:${SECRET}@127.0.0.1:6379`],
    ["SMTP_URL", `smtp://mailer:${SECRET}@smtp.example.com:587`],
  ])("refuses %s with a % in its password, naming the setting and not the password, and takes it percent-encoded", (name, url) => {
    const message = problemsOf({ [name]: url });
    expect(message).toBe(`invalid configuration: ${name}: ${NOT_HEX}`);
    expect(message).not.toContain(SECRET);
    const encoded = url.replace(SECRET, encodeURIComponent(SECRET));
    expect(encoded).toContain("ab%25zzq");
    expect(() => loadConfig({ ...REQUIRED, [name]: encoded })).not.toThrow();
  });

  it("says which part holds it: the user name, the host, the path", () => {
    expect(problemsOf({ DATABASE_URL: "postgres://ap%p@127.0.0.1:5432/wallet_alerts" })).toContain(
      "DATABASE_URL: the user name has a % not followed by two hex digits",
    );
    expect(problemsOf({ DATABASE_URL: "postgres://app@db%host:5432/wallet_alerts" })).toContain("DATABASE_URL: the host has a % not followed by two hex digits");
    expect(problemsOf({ JWT_SECRET: "", JWT_JWKS_URL: "https://issuer.example.com/keys%", JWT_ISSUER: "i", JWT_AUDIENCE: "a" })).toContain(
      "JWT_JWKS_URL: the path has a % not followed by two hex digits",
    );
    expect(problemsOf({ TWILIO_BASE_URL: "https://api.twilio.com/?x=%g1" })).toContain("TWILIO_BASE_URL: the query has a % not followed by two hex digits");
  });

  it("refuses escapes that decode to no UTF-8 text, which decodeURIComponent refuses too", () => {
    expect(problemsOf({ DATABASE_URL: "postgres://app:pw%ff@127.0.0.1:5432/wallet_alerts" })).toContain(
      "DATABASE_URL: the password has %-escapes that are not UTF-8",
    );
  });

  it("is refused the same way by the commands that read one setting: npm run migrate and npm run queues", () => {
    const fails = (load: () => unknown) => {
      try {
        load();
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error("expected a ConfigError");
    };
    const migrate = fails(() => loadDatabaseUrl({ DATABASE_URL: `postgres://app:${SECRET}@127.0.0.1:5432/wallet_alerts` }));
    expect(migrate).toBe(`invalid configuration: DATABASE_URL: ${NOT_HEX}`);
    const queues = fails(() => loadQueuesConfig({ REDIS_URL: `redis://:${SECRET}@127.0.0.1:6379` }));
    expect(queues).toBe(`invalid configuration: REDIS_URL: ${NOT_HEX}`);
    expect(migrate + queues).not.toContain(SECRET);
  });
});
