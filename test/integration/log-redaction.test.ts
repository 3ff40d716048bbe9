// Secrets never reach a log: with every log line captured at the most verbose level, the
// bearer token, a webhook secret (created and rotated), Basic credentials and a Redis password
// that Redis refused never appear.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Deps } from "../../src/deps.ts";
import type { AppInstance } from "../../src/http/app.ts";
import { mintToken } from "../../src/http/mint-token.ts";
import { createRepeatedWarning } from "../../src/log-repeats.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { startPasswordRedis } from "../helpers/redis-server.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";

let logged: LoggedApp;
let lines: string[];
let deps: Deps;
let app: AppInstance;

beforeAll(async () => {
  logged = await startLoggedApp("log-redaction", { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" }, "trace");
  ({ app, deps, lines } = logged);
});
afterAll(async () => {
  await logged.close();
});

describe("log redaction", () => {
  it("logs requests, but never the token, the webhook secrets or the admin password", async () => {
    const token = await mintToken(TEST_JWT_SECRET, { sub: "alice", scope: "wallets:write alerts:write alerts:read", ttlSeconds: 600 });
    const headers = { authorization: `Bearer ${token}` };
    const wallet = (await app.inject({ method: "POST", url: "/v1/wallets", headers, payload: { address: randomAddress() } })).json();
    const alert = (
      await app.inject({
        method: "POST",
        url: "/v1/risk/alerts",
        headers,
        payload: { walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
      })
    ).json();
    const rotated = (await app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/rotate-secret`, headers })).json();
    await app.inject({ url: "/v1/wallets", headers: { authorization: `Bearer ${token}x` } }); // a bad token is logged as a 401
    const basic = `Basic ${Buffer.from("ops:correct-horse-battery").toString("base64")}`;
    await app.inject({ url: "/metrics", headers: { authorization: basic } });

    const log = lines.join("");
    expect(log).toContain('"msg":"request"');
    expect(log).toContain('"status":401');
    for (const secret of [token, token.split(".")[2]!, alert.webhookSecret, rotated.webhookSecret, "correct-horse-battery", basic]) {
      expect(typeof secret).toBe("string");
      expect(log).not.toContain(secret);
    }
  });

  it("never logs the password of a refused Redis AUTH, which ioredis attaches to the error as the command's argument", async () => {
    const server = await startPasswordRedis("s3cret-redis-pw");
    let error: Error;
    try {
      const refused = new Redis(server.url("wrong-redis-pw"), { retryStrategy: () => null, maxRetriesPerRequest: 0 });
      error = await new Promise<Error>((resolve) => refused.once("error", resolve));
      refused.disconnect();
    } finally {
      await server.stop();
    }
    // What the worker's 'error' listener received when REDIS_URL had a wrong password.
    expect(error).toMatchObject({ message: expect.stringContaining("WRONGPASS"), command: { name: "auth", args: ["wrong-redis-pw"] } });

    const from = lines.length;
    createRepeatedWarning(deps.logger, "worker error")(error, { queue: "transactions" }); // as src/queue/run-workers.ts logs it
    app.log.warn({ err: error }, "through Fastify's logger");
    deps.logger.warn({ error }, "under another key");
    deps.logger.warn({ err: new AggregateError([error], "every attempt failed") }, "inside an AggregateError");
    const logged = lines.slice(from);
    for (const msg of ["worker error", "through Fastify's logger", "under another key", "inside an AggregateError"]) {
      expect(logged.find((line) => line.includes(`"msg":"${msg}"`)), msg).toContain('"command":{"name":"auth","args":"[redacted]"}');
    }
    const log = logged.join("");
    expect(log).toContain("WRONGPASS invalid username-password pair");
    expect(log).not.toContain("wrong-redis-pw");
    // Redaction works on the line, not on the error: the object is left as it was.
    expect(error).toMatchObject({ command: { args: ["wrong-redis-pw"] } });
  });
});
