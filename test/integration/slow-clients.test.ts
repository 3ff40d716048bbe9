// Clients that send a request slowly, or keep sending a body the API has already refused, cannot
// hold a connection for as long as they like (connection-bounds.ts): with no token, a body
// trickled in after the 401 held the connection until the client stopped, and thousands of them
// could use up the process's file descriptors. A real listening server and raw sockets:
// app.inject() has no connection, no Node HTTP parser and no timeouts.
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EARLY_ANSWER_LINGER_MS, TIMEOUT_CHECK_INTERVAL_MS } from "../../src/http/connection-bounds.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { parseAnswers, openConnection } from "../helpers/raw-http.ts";
import { makeTransaction } from "../helpers/seed.ts";

/** Short, so that the tests of that bound need not wait the default 2 minutes. */
const RECEIVE_TIMEOUT_MS = 2_000;
/** Node looks for requests past their bound this often (TIMEOUT_CHECK_INTERVAL_MS), plus slack for a busy machine. */
const CHECK_SLACK_MS = TIMEOUT_CHECK_INTERVAL_MS + 1_500;
const TRICKLE_EVERY_MS = 100;

/** Two APIs: one with the default settings, one with a short REQUEST_RECEIVE_TIMEOUT. */
type Listening = { t: TestApp; port: number; token: string };
let defaults: Listening;
let shortReceive: Listening;

async function listening(label: string, env: Record<string, string>): Promise<Listening> {
  const t = await startTestApp(label, env);
  const token = await t.token("slow-client", "ingest:write wallets:write");
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  return { t, port: (t.app.server.address() as AddressInfo).port, token };
}

beforeAll(async () => {
  defaults = await listening("slow-clients", {});
  shortReceive = await listening("slow-clients-receive", { REQUEST_RECEIVE_TIMEOUT: `${RECEIVE_TIMEOUT_MS}ms` });
});
afterAll(async () => {
  await defaults?.t.close();
  await shortReceive?.t.close();
});

type Watched = {
  socket: Socket;
  /** Resolves when the server has closed the connection (or after `giveUpMs`, with closed false). */
  ended: Promise<{ closed: boolean; atMs: number; received: Buffer; error: string | undefined }>;
  /** Ms from the start to the first byte of an answer, once one came. */
  firstAnswerAtMs: () => number | undefined;
};

/**
 * A connection whose end is watched; the client gives up (and closes it itself) after giveUpMs.
 * stubborn: like a client bent on holding the connection, it goes on sending after the server's
 * FIN; otherwise it ends its own side then, as clients do once they have read the answer.
 */
function watch(port: number, giveUpMs: number, { stubborn }: { stubborn: boolean }): Watched {
  const started = Date.now();
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: stubborn });
  let received: Buffer = Buffer.alloc(0);
  let firstAnswerAt: number | undefined;
  let error: string | undefined;
  socket.on("data", (chunk: Buffer) => {
    firstAnswerAt ??= Date.now() - started;
    received = Buffer.concat([received, chunk]);
  });
  socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  const ended = new Promise<{ closed: boolean; atMs: number; received: Buffer; error: string | undefined }>((resolve) => {
    const giveUp = setTimeout(() => {
      resolve({ closed: false, atMs: Date.now() - started, received, error });
      socket.destroy();
    }, giveUpMs);
    socket.on("close", () => {
      clearTimeout(giveUp);
      resolve({ closed: true, atMs: Date.now() - started, received, error });
    });
  });
  return { socket, ended, firstAnswerAtMs: () => firstAnswerAt };
}

/** Sends one byte of body every TRICKLE_EVERY_MS for as long as the connection is open. */
function trickle(socket: Socket): void {
  const timer = setInterval(() => {
    if (!socket.destroyed && socket.writable) socket.write(" ");
  }, TRICKLE_EVERY_MS);
  socket.on("close", () => clearInterval(timer));
}

const head = (method: string, path: string, headers: Record<string, string | number>) =>
  [`${method} ${path} HTTP/1.1`, "Host: api.example", ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), "", ""].join("\r\n");

// (Fastify itself closes on a 413 or 415, which come from reading the body.)
describe("a request answered before its body has arrived", () => {
  it.each([
    ["401 with no token", "POST", "/v1/ingest/transactions", false, 401],
    ["403 when the token lacks the scope", "PUT", "/v1/risk/labels", true, 403],
  ])("is a %s, says Connection: close, and is cut within the linger though the body keeps trickling in", async (_case, method, path, withToken, status) => {
    const connection = watch(defaults.port, EARLY_ANSWER_LINGER_MS + 10_000, { stubborn: true });
    const auth: Record<string, string> = withToken ? { authorization: `Bearer ${defaults.token}` } : {};
    connection.socket.write(head(method, path, { "content-type": "application/json", "content-length": 10_000_000, ...auth }));
    trickle(connection.socket);
    const end = await connection.ended;

    expect(end.closed, "the server closed the connection").toBe(true);
    const [answer] = parseAnswers(end.received);
    expect(answer?.statusCode).toBe(status);
    expect(answer?.headers.connection).toBe("close");
    // From the answer: the linger, and no longer, however long the client would go on.
    const afterAnswerMs = end.atMs - connection.firstAnswerAtMs()!;
    expect(afterAnswerMs).toBeGreaterThanOrEqual(EARLY_ANSWER_LINGER_MS - 100);
    expect(afterAnswerMs).toBeLessThan(EARLY_ANSWER_LINGER_MS + 1_500);
  });

  it("still reaches a client that writes its whole body before it reads (a 401, not a reset)", async () => {
    // Python's http.client and requests do this: an immediate close after the 401 made their
    // send fail with EPIPE or ECONNRESET, and the 401 that says why was never read.
    const connection = watch(defaults.port, EARLY_ANSWER_LINGER_MS + 10_000, { stubborn: false });
    connection.socket.pause();
    const body = Buffer.alloc(8_000_000, " ");
    const written = new Promise<string | undefined>((resolve) =>
      connection.socket.write(Buffer.concat([Buffer.from(head("POST", "/v1/ingest/transactions", { "content-type": "application/json", "content-length": body.length })), body]), (error) =>
        resolve(error ? ((error as NodeJS.ErrnoException).code ?? error.message) : undefined),
      ),
    );
    expect(await written, "the whole body was written").toBeUndefined();
    connection.socket.resume();
    const end = await connection.ended;
    expect(end.error).toBeUndefined();
    expect(parseAnswers(end.received).map((answer) => answer.statusCode)).toEqual([401]);
  });

  it("keeps the connection when the body came whole with its headers", async () => {
    const connection = await openConnection(defaults.port);
    connection.send("POST", "/v1/wallets", { "content-type": "application/json" }, JSON.stringify({ address: randomAddress() }));
    connection.send("GET", "/v1/openapi.json", { connection: "close" });
    const answers = await connection.answers;
    expect(answers.map((answer) => answer.statusCode)).toEqual([401, 200]);
    expect(answers[0]!.headers.connection).not.toBe("close");
  });
});

/** The answer to a request past its receive bound: problem+json 400 (DESIGN.md section 3's codes have no 408), the connection closed. */
function expectTimedOut(received: Buffer): void {
  const [answer, ...more] = parseAnswers(received);
  expect(more).toEqual([]);
  expect(answer?.statusCode).toBe(400);
  expect(answer?.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
  expect(answer?.headers.connection).toBe("close");
  expect(JSON.parse(answer!.body)).toMatchObject({
    status: 400,
    code: "validation_failed",
    detail: "the request did not arrive in time",
    requestId: answer?.headers["x-request-id"],
  });
}

describe("REQUEST_RECEIVE_TIMEOUT", () => {
  it("cuts a request with a valid token whose body trickles in, once the bound has passed, with a problem+json 400", async () => {
    const connection = watch(shortReceive.port, RECEIVE_TIMEOUT_MS + 20_000, { stubborn: true });
    connection.socket.write(head("POST", "/v1/wallets", { "content-type": "application/json", "content-length": 100_000, authorization: `Bearer ${shortReceive.token}` }));
    trickle(connection.socket);
    const end = await connection.ended;

    expect(end.closed, "the server closed the connection").toBe(true);
    expect(end.atMs).toBeGreaterThanOrEqual(RECEIVE_TIMEOUT_MS - 50);
    expect(end.atMs).toBeLessThan(RECEIVE_TIMEOUT_MS + CHECK_SLACK_MS);
    expectTimedOut(end.received);
  });

  it("cuts a request whose headers trickle in past the bound, with the same problem+json 400", async () => {
    const connection = watch(shortReceive.port, RECEIVE_TIMEOUT_MS + 20_000, { stubborn: true });
    connection.socket.write("GET /v1/wallets HTTP/1.1\r\nHost: api.example\r\n");
    const timer = setInterval(() => {
      if (!connection.socket.destroyed && connection.socket.writable) connection.socket.write("X-Slow: 1\r\n");
    }, TRICKLE_EVERY_MS);
    connection.socket.on("close", () => clearInterval(timer));
    const end = await connection.ended;

    expect(end.closed, "the server closed the connection").toBe(true);
    expectTimedOut(end.received);
  });

  it("serves an honest upload that takes most of the bound", async () => {
    const body = Buffer.from(JSON.stringify({ transactions: Array.from({ length: 200 }, () => makeTransaction()) }));
    const pieces = 12;
    const connection = watch(shortReceive.port, RECEIVE_TIMEOUT_MS + 20_000, { stubborn: false });
    connection.socket.write(
      head("POST", "/v1/ingest/transactions", { "content-type": "application/json", "content-length": body.length, authorization: `Bearer ${shortReceive.token}`, connection: "close" }),
    );
    // 12 pieces 110 ms apart: the last one leaves about 1.3 s after the headers.
    const size = Math.ceil(body.length / pieces);
    for (let piece = 0; piece < pieces; piece++) {
      await new Promise((resolve) => setTimeout(resolve, 110));
      connection.socket.write(body.subarray(piece * size, (piece + 1) * size));
    }
    const end = await connection.ended;
    const [answer] = parseAnswers(end.received);
    expect(answer?.statusCode, answer?.body).toBe(202);
    expect(JSON.parse(answer!.body)).toEqual({ accepted: 200, duplicates: 0 });
  });
});
