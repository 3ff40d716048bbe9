// An API that Twilio's status callbacks can reach, for the tests of SMS carrier outcomes: the
// Twilio stand-in, the API listening on loopback at the TWILIO_STATUS_CALLBACK_URL it is
// configured with (Twilio calls a URL fixed in the configuration), and delivery workers.
import { startTestApp, type TestApp } from "./app.ts";
import { startDeliveryWorkers, type DeliveryWorkers } from "./delivery.ts";
import { freePort } from "./ports.ts";
import { TEST_TWILIO, startTwilioStandin, type TwilioStandin } from "./twilio-standin.ts";

export const CALLBACK_ROUTE = "/v1/callbacks/twilio/sms-status";

export const TWILIO_ENV = {
  TWILIO_ACCOUNT_SID: TEST_TWILIO.accountSid,
  TWILIO_AUTH_TOKEN: TEST_TWILIO.authToken,
  TWILIO_FROM: TEST_TWILIO.from,
};

/** A notification's `carrier` as GET /v1/notifications/{id} shows it. */
export type Carrier = { status: string; errorCode: number | null; updatedAt: string } | null;

export type CallbackApp = {
  t: TestApp;
  standin: TwilioStandin;
  workers: DeliveryWorkers;
  callbackUrl: string;
  close: () => Promise<void>;
};

export async function startCallbackApp(
  label: string,
  env: Record<string, string> = {},
  options: Parameters<typeof startTestApp>[2] = {},
): Promise<CallbackApp> {
  const standin = await startTwilioStandin();
  const port = await freePort();
  const callbackUrl = `http://127.0.0.1:${port}${CALLBACK_ROUTE}`;
  const t = await startTestApp(
    label,
    { ...TWILIO_ENV, TWILIO_BASE_URL: standin.baseUrl, TWILIO_STATUS_CALLBACK_URL: callbackUrl, ...env },
    options,
  );
  await t.app.listen({ port, host: "127.0.0.1" });
  const workers = startDeliveryWorkers(t, { smsTimeoutMs: 5_000 });
  return {
    t,
    standin,
    workers,
    callbackUrl,
    close: async () => {
      await workers.close();
      await standin.close();
      await t.close();
    },
  };
}
