// A client that hangs up before its body has arrived is the client's doing, not an outage.
// Node reports it as ECONNRESET ("aborted"), the same code as a PostgreSQL or Redis connection
// reset, and the API used to answer it as one: a "dependency unavailable" warning that also
// took the minute's slot of that kind, so a real outage right after was logged at debug only.
// Here PostgreSQL is a server that resets every connection: a real ECONNRESET from the driver.
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { waitFor } from "../helpers/wait.ts";
import { mintToken } from "../../src/http/mint-token.ts";

let logged: LoggedApp;
let resettingPostgres: Server;
let apiPort: number;
let token: string;
/** Resolves when the next request's body is about to be read (its preParsing hooks ran). */
let bodyReadStarts: () => Promise<void>;

beforeAll(async () => {
  resettingPostgres = createServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => resettingPostgres.listen(0, "127.0.0.1", resolve));
  const { port } = resettingPostgres.address() as AddressInfo;
  logged = await startLoggedApp("client-abort", { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/wallet_alerts` }, "info");
  let reached: (() => void) | undefined;
  bodyReadStarts = () => new Promise<void>((resolve) => (reached = resolve));
  logged.app.addHook("preParsing", async (_request, _reply, payload) => {
    reached?.();
    return payload;
  });
  await logged.app.listen({ port: 0, host: "127.0.0.1" });
  apiPort = (logged.app.server.address() as AddressInfo).port;
  token = await mintToken(TEST_JWT_SECRET, { sub: "hangs-up", scope: "alerts:write ingest:write", ttlSeconds: 600 });
});
afterAll(async () => {
  await logged.close();
  await new Promise((resolve) => resettingPostgres.close(resolve));
});

const logLines = () => logged.lines.map((line) => JSON.parse(line) as { level: number; msg: string; requestId?: string; err?: { code?: string } });
const outageWarnings = () => logLines().filter((line) => line.msg === "dependency unavailable" && line.level === 40);

/** Promises 1000 bytes of body to `path`, sends 12, and hangs up once the server is reading them. */
async function hangUpMidBody(path: string): Promise<void> {
  const socket: Socket = connect(apiPort, "127.0.0.1");
  socket.on("error", () => {});
  const reading = bodyReadStarts();
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Length: 1000\r\n\r\n{"walletId":`,
  );
  await reading;
  socket.destroy();
}

const cutShort = () => logLines().filter((line) => line.msg === "request body cut short: the client closed the connection");

describe("a client that hangs up mid-body", () => {
  // The ingest route reads its body through a stream of its own (raw-body.ts): the same verdict.
  it.each(["/v1/risk/alerts", "/v1/ingest/transactions"])("to %s is logged as a client's hang-up, with no dependency warning", async (path) => {
    const before = cutShort().length;
    await hangUpMidBody(path);
    const [line] = await waitFor("the hang-up's log line", async () => cutShort().length > before && cutShort().slice(before), 5_000);
    expect(line).toMatchObject({ level: 30, err: { code: "ECONNRESET" } });
    expect(outageWarnings()).toEqual([]);
  });

  it("leaves a real PostgreSQL ECONNRESET in the same minute a 503 with its warning", async () => {
    const res = await logged.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: { authorization: `Bearer ${token}` },
      payload: { walletId: "wal_00000000000000000000000000", condition: "unusual_activity", notificationMethod: "email", recipient: "ops@example.com" },
    });
    expect(res.statusCode, res.payload).toBe(503);
    expect(res.json()).toMatchObject({ code: "unavailable" });
    expect(res.headers["retry-after"]).toBe("5");
    // At warn, and with this request's id: the hang-ups before took no slot of the minute's warnings.
    expect(outageWarnings()).toEqual([expect.objectContaining({ requestId: res.json<{ requestId: string }>().requestId, err: expect.objectContaining({ code: "ECONNRESET" }) })]);
  });
});
