// An untokened large_transfer cooldown digest that held back firings of several tokens, as its
// recipient reads it (notify/render-digest.ts): each token's largest named, the sent first,
// bounded, each introduced by its direction so that "largest" is never said of a sent firing a
// larger receipt was left out beside; and its body against the schemas the OpenAPI document publishes.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import { describe, expect, it } from "vitest";
import type { NotificationPayload, SuppressedSummary } from "../../src/domain/types.ts";
import { webhooksDocument } from "../../src/http/openapi-webhooks.ts";
import { ClosedSuppressedPayloadSchema } from "../../src/notify/digest-payload-schema.ts";
import { renderEmail } from "../../src/notify/render.ts";
import { gsm7Length, isGsm7, renderSms } from "../../src/notify/render-sms.ts";
import { digestPayload } from "../../src/pipeline/cooldown-digest.ts";

const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;
const WALLET = "8jb5Cq2sXhQpE4fTyKf3uR7vL9mN1wZ6aD5gH8jKkegn";

type Named = NonNullable<SuppressedSummary["largestByToken"]>[number];
const DRAIN: Named = {
  eventId: "evt_02",
  observed: 50_000,
  reason: "Sent 50,000 SOL to 2Rt8xt…ncv9Ud (threshold 1,000).",
  transactionSignature: "5drain",
  createdAt: "2026-11-28T12:00:02.000Z",
  direction: "sent",
};
const JUNK: Named = {
  eventId: "evt_03",
  observed: 1_000_000_000_000,
  reason: "Received 1,000,000,000,000 6J9x…2xru from GryGc8…EDgx82 (threshold 1,000).",
  transactionSignature: "5junk",
  createdAt: "2026-11-28T12:00:04.000Z",
  direction: "received",
};
const USDC: Named = { ...JUNK, eventId: "evt_04", observed: 20_000, reason: "Received 20,000 USDC from 7xKXtg…9fQaBc (threshold 1,000).", transactionSignature: "5usdc" };
const BONK: Named = { ...JUNK, eventId: "evt_05", observed: 9_000_000, reason: "Received 9,000,000 BONK from 7xKXtg…9fQaBc (threshold 1,000).", transactionSignature: "5bonk" };

function digest(named: Named[], otherTokens = 0, alias: string | null = "Cooldown desk"): NotificationPayload {
  const { direction: _direction, ...strongest } = named[0]!;
  const summary: SuppressedSummary = {
    count: named.length + otherTokens + 1,
    windowStart: "2026-11-28T12:00:00.000Z",
    windowEnd: "2026-11-28T12:00:25.000Z",
    firstAt: "2026-11-28T12:00:02.000Z",
    lastAt: "2026-11-28T12:00:04.000Z",
    strongest,
    eventIds: ["evt_02", "evt_03"],
    largestByToken: named,
    otherTokens,
  };
  const unbuilt: NotificationPayload = {
    type: "risk_alert.suppressed",
    timestamp: "2026-11-28T12:00:25.000Z",
    data: { alertId: "alr_1", walletId: "wal_1", address: WALLET, alias, condition: "large_transfer", threshold: 1_000, observed: null, riskScore: 20, riskFactors: [], reason: "" },
  };
  return digestPayload(unbuilt, summary, { riskScore: 20, riskFactors: [] }, new Date("2026-11-28T12:00:25.000Z"));
}

describe("a large_transfer digest of several tokens", () => {
  it("names each token's largest in its reason, the sent first, as the largest sent or received, and says how many tokens", () => {
    const payload = digest([DRAIN, JUNK]);
    expect(payload.data.reason).toBe(
      "3 more large_transfer firings held back during the cooldown, in 2 tokens; largest sent: Sent 50,000 SOL to 2Rt8xt…ncv9Ud (threshold 1,000); largest received: Received 1,000,000,000,000 6J9x…2xru from GryGc8…EDgx82 (threshold 1,000).",
    );
    expect(payload.data.observed).toBe(50_000);
  });

  it("names at most three tokens and counts the rest, in the reason and the email, whose row points at the events list", () => {
    const payload = digest([DRAIN, JUNK, USDC], 2);
    expect(payload.data.reason).toMatch(
      /in 5 tokens; largest sent: Sent 50,000 SOL [^;]*; largest received of each: Received 1,000,000,000,000 [^;]*; Received 20,000 USDC [^;]*; and 2 more tokens\.$/,
    );
    const email = renderEmail(payload);
    // eventIds holds the first 100 events only: the other tokens' events are in the events list.
    expect(email.text).toMatch(/^Other tokens: +2 more tokens held back, in the alert's events list \(GET \/v1\/risk\/alerts\/alr_1\/events\)$/m);
    expect(email.text).toMatch(/^Largest received, token 3 of 5: +Received 20,000 USDC from 7xKXtg…9fQaBc \(threshold 1,000\)\.$/m);
    expect(email.text).not.toContain("BONK");
  });

  it("groups several sent tokens as the largest sent of each", () => {
    const usdcSent: Named = { ...DRAIN, eventId: "evt_06", observed: 3_000, reason: "Sent 3,000 USDC to 7xKXtg…9fQaBc (threshold 1,000).", transactionSignature: "5usdcout" };
    expect(digest([DRAIN, usdcSent, JUNK]).data.reason).toBe(
      "4 more large_transfer firings held back during the cooldown, in 3 tokens; largest sent of each: Sent 50,000 SOL to 2Rt8xt…ncv9Ud (threshold 1,000); Sent 3,000 USDC to 7xKXtg…9fQaBc (threshold 1,000); largest received: Received 1,000,000,000,000 6J9x…2xru from GryGc8…EDgx82 (threshold 1,000).",
    );
  });

  it("emails each named token's firing with its time and transaction, the sent first, and leads the subject with it", () => {
    const email = renderEmail(digest([DRAIN, JUNK]));
    expect(email.subject).toBe("[Risk alert] Cooldown desk: 3 held back — largest sent: Sent 50,000 SOL to…");
    const lines = email.text.split("\n");
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    expect(lines[at(/^Largest sent, token 1 of 2:/)]).toMatch(/^Largest sent, token 1 of 2: +Sent 50,000 SOL to 2Rt8xt…ncv9Ud \(threshold 1,000\)\.$/);
    expect(lines[at(/^Largest received, token 2 of 2:/)]).toMatch(
      /^Largest received, token 2 of 2: +Received 1,000,000,000,000 6J9x…2xru from GryGc8…EDgx82 \(threshold 1,000\)\.$/,
    );
    expect(at(/^Largest sent, token 1 of 2:/)).toBeLessThan(at(/^Largest received, token 2 of 2:/));
    expect(lines.slice(at(/^Largest received, token 2 of 2:/))).toEqual(expect.arrayContaining([expect.stringMatching(/^Detected at: +2026-11-28 12:00:04 UTC$/), expect.stringMatching(/^Transaction: +5junk$/)]));
    expect(email.text).not.toMatch(/^Other tokens:/m);
    expect(email.html).toContain("Sent 50,000 SOL to 2Rt8xt…ncv9Ud");
  });

  it("texts the first named firing alone, and that it was one of several tokens, in one GSM-7 segment", () => {
    const sms = renderSms(digest([DRAIN, JUNK]));
    expect(sms).toBe("Risk alert on Cooldown desk: 3 more large_transfer held back in the cooldown, in 2 tokens; largest sent: Sent 50,000 SOL to 2Rt8xt...ncv9Ud (threshold 1,000).");
    expect(isGsm7(sms)).toBe(true);
    const long = renderSms(digest([DRAIN, JUNK, BONK], 7, "Treasury hot wallet of the fund's operations desk, Singapore"));
    expect(gsm7Length(long)).toBeLessThanOrEqual(160);
    expect(long).toMatch(/held back, in 10 tokens; largest sent: Sent 50,000 SOL/);
    expect(long).not.toContain("1,000,000,000,000");
  });

  it("calls one token's named sent firing its largest sent, in every channel: a larger receipt of it may have been left out", () => {
    const payload = digest([DRAIN], 0);
    expect(payload.data.reason).toBe("2 more large_transfer firings held back during the cooldown; largest sent: Sent 50,000 SOL to 2Rt8xt…ncv9Ud (threshold 1,000).");
    const email = renderEmail(payload);
    expect(email.subject).toBe("[Risk alert] Cooldown desk: 2 held back — largest sent: Sent 50,000 SOL to…");
    expect(email.text).toMatch(/^Largest sent: +Sent 50,000 SOL/m);
    expect(renderSms(payload)).toBe("Risk alert on Cooldown desk: 2 more large_transfer held back in the cooldown; largest sent: Sent 50,000 SOL to 2Rt8xt...ncv9Ud (threshold 1,000).");
  });

  it("calls one token's named receipt its largest received", () => {
    const payload = digest([JUNK], 0);
    expect(payload.data.reason).toMatch(/; largest received: Received 1,000,000,000,000 6J9x…2xru /);
    expect(renderEmail(payload).text).toMatch(/^Largest received: +Received 1,000,000,000,000 /m);
    expect(renderSms(payload)).toMatch(/; largest received: Received 1,000,000,000,000 /);
  });

  it("is a body the closed schema and the published webhook schema accept", () => {
    const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }));
    const published = (webhooksDocument()["risk_alert.suppressed"] as { post: { requestBody: { content: Record<string, { schema: object }> } } }).post.requestBody
      .content["application/json"]!.schema;
    for (const schema of [JSON.parse(JSON.stringify(ClosedSuppressedPayloadSchema)) as object, published]) {
      const validate = ajv.compile(schema);
      for (const body of [digest([DRAIN, JUNK]), digest([DRAIN, JUNK, USDC], 4), digest([JUNK])]) {
        expect(validate(JSON.parse(JSON.stringify(body))), ajv.errorsText(validate.errors)).toBe(true);
      }
    }
    const closed = ajv.compile(JSON.parse(JSON.stringify(ClosedSuppressedPayloadSchema)) as object);
    const wrongDirection = digest([DRAIN]);
    wrongDirection.data.suppressed!.largestByToken![0]!.direction = "outgoing" as "sent";
    expect(closed(JSON.parse(JSON.stringify(wrongDirection)))).toBe(false);
  });
});
