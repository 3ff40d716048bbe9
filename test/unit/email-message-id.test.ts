import { describe, expect, it } from "vitest";
import { domainOfSender, messageIdFor } from "../../src/notify/channels/email.ts";

describe("an email's Message-ID", () => {
  it("puts the notification id at EMAIL_FROM's domain, with or without a display name", () => {
    expect(messageIdFor("ntf_1", domainOfSender("alerts@example.com"))).toBe("<ntf_1@example.com>");
    expect(messageIdFor("ntf_1", domainOfSender("Wallet Alerts <alerts@mail.example.com>"))).toBe("<ntf_1@mail.example.com>");
  });

  it("writes an internationalised domain in its ASCII (punycode) form, as headers need", () => {
    expect(domainOfSender("alerts@bücher.example")).toBe("xn--bcher-kva.example");
  });

  it("falls back to wallet-alerts only when EMAIL_FROM has no domain", () => {
    expect(domainOfSender("alerts")).toBeUndefined();
    expect(messageIdFor("ntf_1", undefined)).toBe("<ntf_1@wallet-alerts>");
  });
});
