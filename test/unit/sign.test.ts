import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { generateWebhookSecret } from "../../src/notify/webhook-secret.ts";
import { secretsInForce, signatureHeader, signatureOf, webhookHeaders } from "../../src/notify/sign.ts";

describe("Standard Webhooks signatures", () => {
  it("matches the specification's known answer", () => {
    const signature = signatureOf(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("produces headers that the standardwebhooks library verifies", () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ type: "risk_alert.test", n: 1 });
    const headers = webhookHeaders([secret], "ntf_x", new Date(), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ type: "risk_alert.test", n: 1 });
  });

  it("signs with every secret in force, so either one verifies during a rotation", () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = "{}";
    const headers = webhookHeaders([current, previous], "ntf_y", new Date(), body);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it("changes the signature when the body, id or timestamp changes", () => {
    const secret = generateWebhookSecret();
    const base = signatureHeader([secret], "ntf_a", 100, "{}");
    expect(signatureHeader([secret], "ntf_a", 100, "{ }")).not.toBe(base);
    expect(signatureHeader([secret], "ntf_b", 100, "{}")).not.toBe(base);
    expect(signatureHeader([secret], "ntf_a", 101, "{}")).not.toBe(base);
  });

  it("uses the webhook timestamp in whole Unix seconds of the attempt", () => {
    const headers = webhookHeaders(["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], "ntf_c", new Date(1614265330_999), "{}");
    expect(headers["webhook-timestamp"]).toBe("1614265330");
    expect(headers["webhook-id"]).toBe("ntf_c");
  });
});

describe("secretsInForce", () => {
  const now = new Date("2026-03-01T12:00:00Z");
  const later = new Date(now.getTime() + 1_000);
  const earlier = new Date(now.getTime() - 1_000);

  it("uses a previous secret only until it expires", () => {
    const previous = (secret: string, at: Date) => ({ secret, expiresAt: at.toISOString() });
    expect(secretsInForce({ webhookSecret: "a", previousWebhookSecrets: [previous("b", later)] }, now)).toEqual(["a", "b"]);
    expect(secretsInForce({ webhookSecret: "a", previousWebhookSecrets: [previous("b", earlier)] }, now)).toEqual(["a"]);
    expect(secretsInForce({ webhookSecret: "a", previousWebhookSecrets: [] }, now)).toEqual(["a"]);
  });

  it("signs with every previous secret still in its grace period, each until its own expiry", () => {
    const secrets = { webhookSecret: "c", previousWebhookSecrets: [{ secret: "b", expiresAt: later.toISOString() }, { secret: "a", expiresAt: later.toISOString() }] };
    expect(secretsInForce(secrets, now)).toEqual(["c", "b", "a"]);
  });
});
