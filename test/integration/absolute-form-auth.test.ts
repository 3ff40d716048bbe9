// Authentication comes before anything else, also for a request target in absolute form
// ("GET http://host/v1/nope HTTP/1.1", which HTTP/1.1 servers must accept): an unknown /v1
// path without a token is a 401 however it is spelled, never a 404 that tells what exists.
// inject() cannot send that form, so these go over a real socket.
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp("absolute-form-auth");
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await t.close();
});

/** Sends `requestTarget` as written, without a token; the status line and headers of the answer. */
function rawGet(requestTarget: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("end", () => resolve(received.split("\r\n\r\n", 1)[0]!));
    socket.on("error", reject);
    socket.write(`GET ${requestTarget} HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n`);
  });
}

describe("a request target in absolute form without a token", () => {
  it.each(["http://api.example/v1/nope", "http://evil/v1/nope?x=1", "HTTP://evil/V1/no-such-route"])("%s is a 401, as its origin form is", async (target) => {
    const head = await rawGet(target);
    expect(head).toMatch(/^HTTP\/1\.1 401 /);
    expect(head.toLowerCase()).toContain('www-authenticate: bearer realm="wallet-alerts", error="invalid_token"');
    expect(head.toLowerCase()).toContain("content-type: application/problem+json");
  });

  it("leaves a path outside /v1 in absolute form a 404", async () => {
    expect(await rawGet("http://api.example/nope")).toMatch(/^HTTP\/1\.1 404 /);
  });
});
