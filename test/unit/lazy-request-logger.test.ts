import { Writable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import { lazyRequestLogger } from "../../src/http/lazy-request-logger.ts";
import { createLogger } from "../../src/logger.ts";

/** The service's logger writing to memory, and how many children it has made. */
function capture(level = "info") {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(level, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) }));
  let children = 0;
  // The parent as Fastify holds it, counting the children asked of it (theirs are pino's own).
  const parent = Object.create(logger) as FastifyBaseLogger;
  parent.child = (bindings, options) => (children++, logger.child(bindings, options) as unknown as FastifyBaseLogger);
  return { parent, lines, children: () => children };
}

describe("a request's logger", () => {
  it("makes no child logger for a request that never logs through it", () => {
    const { parent, children } = capture();
    lazyRequestLogger(parent, { reqId: "req-1" }, {});
    expect(children()).toBe(0);
  });

  it("writes with the request's bindings, making its child once, on the first line", () => {
    const { parent, lines, children } = capture();
    const log = lazyRequestLogger(parent, { reqId: "req-2" }, {});
    log.info({ route: "/v1/wallets" }, "first");
    log.warn("second");
    expect(children()).toBe(1);
    expect(lines).toMatchObject([
      { reqId: "req-2", route: "/v1/wallets", msg: "first", level: 30 },
      { reqId: "req-2", msg: "second", level: 40 },
    ]);
  });

  it("keeps the parent's level, and a route's own level given as an option", () => {
    const { parent, lines } = capture("warn");
    const quiet = lazyRequestLogger(parent, { reqId: "req-3" }, {});
    quiet.info("dropped at warn");
    expect(quiet.level).toBe("warn");
    const chatty = lazyRequestLogger(parent, { reqId: "req-4" }, { level: "debug" });
    chatty.debug("kept at the route's debug");
    expect(lines.map((line) => line.msg)).toEqual(["kept at the route's debug"]);
  });

  it("redacts what the service's logger redacts, and binds a child's bindings after the request's", () => {
    const { parent, lines } = capture();
    const log = lazyRequestLogger(parent, { reqId: "req-5" }, {}).child({ job: "j" });
    log.info({ authorization: "Bearer eyJ.secret.sig" }, "with a token");
    expect(lines[0]).toMatchObject({ reqId: "req-5", job: "j", authorization: "[redacted]" });
  });
});
