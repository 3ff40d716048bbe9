// The SMS channel's timeout covers the whole exchange with Twilio, not only the wait for the
// answer's headers: a peer that answers 201 and then trickles its body, one byte at a time,
// never going idle, held a send (and a worker's stop) for as long as it went on.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSmsChannel } from "../../src/notify/channels/sms.ts";
import { createLogger } from "../../src/logger.ts";
import { samplePayload } from "../helpers/delivery.ts";
import { TEST_TWILIO } from "../helpers/twilio-standin.ts";

let server: Server;
let baseUrl: string;
let requests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(201, { "content-type": "application/json" });
    res.write("{");
    // A space every 50 ms until the client goes: never idle, never done.
    const drip = setInterval(() => res.write(" "), 50);
    res.on("close", () => clearInterval(drip));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("an SMS whose answer never ends", () => {
  it("ends at the channel's timeout as a retried transport failure", async () => {
    const channel = createSmsChannel({
      twilio: { ...TEST_TWILIO, baseUrl, statusCallbackUrl: undefined },
      allowedCountries: undefined,
      timeoutMs: 400,
      logger: createLogger("silent"),
    });
    const result = await channel.send({
      notificationId: "ntf_trickle",
      destination: "+14155550999",
      payload: samplePayload({ alertId: "alr_trickle", walletId: "wal_trickle", address: "CoEnXgSVcycv9wuPFFitTXJWbJh2Eaoa6pRbzK3b9ALH" }),
      secrets: [],
      attemptAt: new Date(),
    });
    expect(requests).toBe(1);
    expect(result).toMatchObject({ errorCode: "ETIMEDOUT", providerUnavailable: true, error: "ETIMEDOUT: no complete answer from Twilio within 400 ms" });
    expect(result.statusCode).toBeUndefined();
  }, 15_000);
});
