import { describe, expect, it } from "vitest";
import { bannerLines, type BannerFacts } from "../../src/demo/banner.ts";

const facts = (adminPassword: BannerFacts["adminPassword"]): BannerFacts => ({
  publicUrl: "http://127.0.0.1:3000",
  caller: "demo",
  wallets: 4,
  adminUser: "admin",
  adminPassword,
  sinkUrl: "http://127.0.0.1:4000/hooks/risk-alerts",
  smtpUrl: undefined,
  twilio: false,
  token: "eyJ.token",
});

describe("the demo's banner", () => {
  it("never shows a password set in ADMIN_PASSWORD, only where it comes from", () => {
    const text = bannerLines(facts({ value: "operator-secret-pw", generated: false })).join("\n");
    expect(text).not.toContain("operator-secret-pw");
    expect(text).toContain("(user admin, password from ADMIN_PASSWORD)");
  });

  it("shows a password the demo made up for the run, which nothing else would tell", () => {
    const text = bannerLines(facts({ value: "Zm9vYmFyYmF6", generated: true })).join("\n");
    expect(text).toContain("(user admin, password Zm9vYmFyYmF6, made up for this run)");
  });
});
