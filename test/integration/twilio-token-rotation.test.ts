// TWILIO_AUTH_TOKEN rotated with Twilio's secondary token, as README's procedure does it: every
// process runs with TWILIO_AUTH_TOKEN set to the new (secondary) token, which Twilio takes for its
// REST API at once, and TWILIO_AUTH_TOKEN_PREVIOUS set to the old primary, with which Twilio goes
// on signing status callbacks until the secondary is promoted. Real workers send through the
// stand-in, which signs its callbacks with its own token (here the old primary, not yet replaced).
import { randomBytes } from "node:crypto";
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCallbackApp, type CallbackApp, type Carrier } from "../helpers/carrier-callbacks.ts";
import { isFinished, seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";
import { TEST_TWILIO, type CarrierReport } from "../helpers/twilio-standin.ts";
import { waitFor } from "../helpers/wait.ts";

const NEW_TOKEN = "twilio-new-secondary-token-0123";

let app: CallbackApp;
let alice: string;
beforeAll(async () => {
  app = await startCallbackApp("twilio-token-rotation", { TWILIO_AUTH_TOKEN: NEW_TOKEN, TWILIO_AUTH_TOKEN_PREVIOUS: TEST_TWILIO.authToken });
  alice = await app.t.token("alice");
});
afterAll(async () => {
  await app?.close();
});

/** An SMS alert on `to` and one notification, sent by the workers until Twilio took it: its id and Twilio's sid. */
async function sendSms(to: string, reports: readonly CarrierReport[]) {
  app.standin.carrierReportsFor(to, reports);
  const alert = await seedAlert(app.t, { method: "sms", recipient: to });
  const id = await seedNotification(app.t, alert, "sms", to);
  expect((await waitForNotification(app.t, id, isFinished)).status).toBe("delivered");
  const message = app.standin.messages().find((m) => m.to === to);
  expect(message, `the stand-in got no message to ${to}`).toBeDefined();
  return { id, sid: message!.sid };
}

async function carrierOf(id: string): Promise<Carrier> {
  const res = await app.t.app.inject({ url: `/v1/notifications/${id}`, headers: { authorization: `Bearer ${alice}` } });
  expect(res.statusCode).toBe(200);
  return res.json<{ carrier: Carrier }>().carrier;
}

const signedWith = (token: string, params: Record<string, string>) => twilio.getExpectedTwilioSignature(token, app.callbackUrl, params);

describe("SMS status callbacks while TWILIO_AUTH_TOKEN is rotated", () => {
  it("before the promotion: records the statuses Twilio signs with the old primary token (TWILIO_AUTH_TOKEN_PREVIOUS)", async () => {
    const { id, sid } = await sendSms("+12125550101", [{ status: "sent" }, { status: "delivered" }]);
    const posted = await waitFor("2 status callbacks", async () => {
      const callbacks = app.standin.callbacks().filter((c) => c.params.MessageSid === sid);
      return callbacks.length >= 2 && callbacks;
    });
    expect(posted.map((c) => [c.params.MessageStatus, c.answer])).toEqual([["sent", 204], ["delivered", 204]]);
    expect(await carrierOf(id)).toMatchObject({ status: "delivered", errorCode: null });
  });

  it("after the promotion: records a status signed with the new token; refuses one signed with any other token (403) and records nothing", async () => {
    const { id, sid } = await sendSms("+12125550102", []);
    const params = { AccountSid: TEST_TWILIO.accountSid, MessageSid: sid, MessageStatus: "undelivered", ErrorCode: "30003" };

    const foreign = await app.standin.postStatusCallback(app.callbackUrl, params, { signature: signedWith(`other-${randomBytes(8).toString("hex")}`, params) });
    expect(foreign.status).toBe(403);
    expect(await carrierOf(id)).toBeNull();

    const promoted = await app.standin.postStatusCallback(app.callbackUrl, params, { signature: signedWith(NEW_TOKEN, params) });
    expect(promoted.status).toBe(204);
    expect(await carrierOf(id)).toMatchObject({ status: "undelivered", errorCode: 30003 });
  });
});
