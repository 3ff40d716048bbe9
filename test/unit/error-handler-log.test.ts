// While PostgreSQL or Redis is down every request fails alike; the log must say so once, not
// once per request. A real Fastify app with the service's error handling and logger.
import { Writable } from "node:stream";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import { registerErrorHandling } from "../../src/http/error-handler.ts";
import { createLogger } from "../../src/logger.ts";

function appFailingWith(error: () => Error) {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
  const app = Fastify({ loggerInstance: createLogger("info", sink) as FastifyBaseLogger });
  registerErrorHandling(app);
  app.get("/v1/thing", async () => {
    throw error();
  });
  return { app, lines };
}

describe("a backing service that is down", () => {
  it("answers every request 503, and warns once with the first request's id, not once per request", async () => {
    const { app, lines } = appFailingWith(() => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
    const answers = await Promise.all(Array.from({ length: 10 }, () => app.inject({ url: "/v1/thing" })));
    expect(answers.map((res) => res.statusCode)).toEqual(Array.from({ length: 10 }, () => 503));
    const warnings = lines.filter((line) => line.includes("dependency unavailable"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, requestId: answers[0]!.json<{ requestId: string }>().requestId });
    await app.close();
  });

  it("warns once for the whole app, not once per plugin its routes are registered in", async () => {
    const { app, lines } = appFailingWith(() => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
    for (const family of ["wallets", "alerts"]) {
      await app.register(async (plugin) => {
        plugin.get(`/v1/${family}`, async () => {
          throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
        });
      });
    }
    const answers = [await app.inject({ url: "/v1/wallets" }), await app.inject({ url: "/v1/alerts" }), await app.inject({ url: "/v1/thing" })];
    expect(answers.map((res) => res.statusCode)).toEqual([503, 503, 503]);
    expect(lines.filter((line) => line.includes("dependency unavailable") && line.includes('"level":40'))).toHaveLength(1);
    await app.close();
  });

  it("warns again for another kind of failure", async () => {
    let call = 0;
    const { app, lines } = appFailingWith(() =>
      ++call === 1 ? Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) : Object.assign(new Error("read ETIMEDOUT"), { code: "ETIMEDOUT" }),
    );
    await app.inject({ url: "/v1/thing" });
    await app.inject({ url: "/v1/thing" });
    expect(lines.filter((line) => line.includes("dependency unavailable"))).toHaveLength(2);
    await app.close();
  });
});
