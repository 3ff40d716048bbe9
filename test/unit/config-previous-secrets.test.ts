// The values accepted beside the current ones while a secret is rotated (HELIUS_AUTH_HEADER_PREVIOUS,
// TWILIO_AUTH_TOKEN_PREVIOUS, ADMIN_PASSWORD_PREVIOUS): read as their current counterparts are,
// and refused where they could not be what the operator meant. No message carries a value.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

const HELIUS_NEW = "helius-new-auth-header-0123456789";
const HELIUS_OLD = "helius-old-auth-header-9876543210";
const TWILIO = { TWILIO_ACCOUNT_SID: `AC${"0".repeat(32)}`, TWILIO_FROM: "+15005550006" };
const TOKEN_NEW = "twilio-new-secondary-token";
const TOKEN_OLD = "twilio-old-primary-token";
const ADMIN_NEW = "admin-new-password-0123456789";
const ADMIN_OLD = "admin-old-password-9876543210";

const expectNoValues = (message: string) => {
  for (const value of [HELIUS_NEW, HELIUS_OLD, TOKEN_NEW, TOKEN_OLD, ADMIN_NEW, ADMIN_OLD]) expect(message).not.toContain(value);
};

describe("HELIUS_AUTH_HEADER_PREVIOUS", () => {
  it("is read beside HELIUS_AUTH_HEADER, its ends trimmed as the current one's; unset, there is none", () => {
    const config = loadConfig({ ...REQUIRED, HELIUS_AUTH_HEADER: HELIUS_NEW, HELIUS_AUTH_HEADER_PREVIOUS: `${HELIUS_OLD}\n` });
    expect(config.heliusAuthHeader).toBe(HELIUS_NEW);
    expect(config.previousHeliusAuthHeader).toBe(HELIUS_OLD);
    expect(loadConfig({ ...REQUIRED, HELIUS_AUTH_HEADER: HELIUS_NEW }).previousHeliusAuthHeader).toBeUndefined();
  });

  it("is refused without HELIUS_AUTH_HEADER, equal to it, or where HELIUS_AUTH_HEADER would be (too short, a control character)", () => {
    const without = problemsOf({ HELIUS_AUTH_HEADER_PREVIOUS: HELIUS_OLD });
    expect(without).toBe(
      "invalid configuration: HELIUS_AUTH_HEADER_PREVIOUS needs HELIUS_AUTH_HEADER: it is the old value, accepted beside HELIUS_AUTH_HEADER (the new one) during a rotation",
    );
    // Equal once trimmed, as both are compared with what arrives.
    const same = problemsOf({ HELIUS_AUTH_HEADER: HELIUS_NEW, HELIUS_AUTH_HEADER_PREVIOUS: ` ${HELIUS_NEW}` });
    expect(same).toBe(
      "invalid configuration: HELIUS_AUTH_HEADER_PREVIOUS is the same as HELIUS_AUTH_HEADER: set it to the old value being replaced (and HELIUS_AUTH_HEADER to the new one), or unset it when no rotation is under way",
    );
    expect(problemsOf({ HELIUS_AUTH_HEADER: HELIUS_NEW, HELIUS_AUTH_HEADER_PREVIOUS: "short" })).toBe(
      "invalid configuration: HELIUS_AUTH_HEADER_PREVIOUS: expected at least 16 characters",
    );
    expect(problemsOf({ HELIUS_AUTH_HEADER: HELIUS_NEW, HELIUS_AUTH_HEADER_PREVIOUS: `${HELIUS_OLD}\u0007x` })).toContain(
      "HELIUS_AUTH_HEADER_PREVIOUS: expected printable ASCII only",
    );
    // HELIUS_AUTH_HEADER given and refused says so, once: not also "needs HELIUS_AUTH_HEADER".
    expect(problemsOf({ HELIUS_AUTH_HEADER: "short", HELIUS_AUTH_HEADER_PREVIOUS: HELIUS_OLD })).toBe(
      "invalid configuration: HELIUS_AUTH_HEADER: expected at least 16 characters",
    );
    expectNoValues(without + same);
  });
});

describe("TWILIO_AUTH_TOKEN_PREVIOUS", () => {
  it("is read beside TWILIO_AUTH_TOKEN; unset, there is none", () => {
    const config = loadConfig({ ...REQUIRED, ...TWILIO, TWILIO_AUTH_TOKEN: TOKEN_NEW, TWILIO_AUTH_TOKEN_PREVIOUS: TOKEN_OLD });
    expect(config.twilio).toMatchObject({ authToken: TOKEN_NEW, previousAuthToken: TOKEN_OLD });
    expect(loadConfig({ ...REQUIRED, ...TWILIO, TWILIO_AUTH_TOKEN: TOKEN_NEW }).twilio.previousAuthToken).toBeUndefined();
  });

  it("is refused without TWILIO_AUTH_TOKEN or equal to it", () => {
    const without = problemsOf({ SMS_TRANSPORT: "log", TWILIO_AUTH_TOKEN_PREVIOUS: TOKEN_OLD });
    expect(without).toBe(
      "invalid configuration: TWILIO_AUTH_TOKEN_PREVIOUS needs TWILIO_AUTH_TOKEN: it is the old value, accepted beside TWILIO_AUTH_TOKEN (the new one) during a rotation",
    );
    const same = problemsOf({ ...TWILIO, TWILIO_AUTH_TOKEN: TOKEN_NEW, TWILIO_AUTH_TOKEN_PREVIOUS: TOKEN_NEW });
    expect(same).toBe(
      "invalid configuration: TWILIO_AUTH_TOKEN_PREVIOUS is the same as TWILIO_AUTH_TOKEN: set it to the old value being replaced (and TWILIO_AUTH_TOKEN to the new one), or unset it when no rotation is under way",
    );
    expectNoValues(without + same);
  });
});

describe("ADMIN_PASSWORD_PREVIOUS", () => {
  it("is read beside ADMIN_PASSWORD, its ends trimmed as the current one's; unset, there is none", () => {
    const config = loadConfig({ ...REQUIRED, ADMIN_USER: "ops", ADMIN_PASSWORD: ADMIN_NEW, ADMIN_PASSWORD_PREVIOUS: `${ADMIN_OLD}\n` });
    expect(config.admin).toEqual({ user: "ops", password: ADMIN_NEW, previousPassword: ADMIN_OLD });
    expect(loadConfig({ ...REQUIRED, ADMIN_USER: "ops", ADMIN_PASSWORD: ADMIN_NEW }).admin.previousPassword).toBeUndefined();
  });

  it("is refused without ADMIN_PASSWORD, equal to it, or where ADMIN_PASSWORD would be (too short)", () => {
    const without = problemsOf({ ADMIN_PASSWORD_PREVIOUS: ADMIN_OLD });
    expect(without).toBe(
      "invalid configuration: ADMIN_PASSWORD_PREVIOUS needs ADMIN_PASSWORD: it is the old value, accepted beside ADMIN_PASSWORD (the new one) during a rotation",
    );
    const same = problemsOf({ ADMIN_USER: "ops", ADMIN_PASSWORD: ADMIN_NEW, ADMIN_PASSWORD_PREVIOUS: `${ADMIN_NEW} ` });
    expect(same).toBe(
      "invalid configuration: ADMIN_PASSWORD_PREVIOUS is the same as ADMIN_PASSWORD: set it to the old value being replaced (and ADMIN_PASSWORD to the new one), or unset it when no rotation is under way",
    );
    expect(problemsOf({ ADMIN_USER: "ops", ADMIN_PASSWORD: ADMIN_NEW, ADMIN_PASSWORD_PREVIOUS: "short" })).toBe(
      "invalid configuration: ADMIN_PASSWORD_PREVIOUS: expected at least 16 characters",
    );
    expectNoValues(without + same);
  });
});
