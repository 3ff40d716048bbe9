// JWT_SECRET_PREVIOUS, the HS256 secret being replaced: checked as JWT_SECRET is, and only
// beside a JWT_SECRET it differs from. No message carries either secret.
import { describe, expect, it } from "vitest";
import { loadConfig, loadJwtConfig } from "../../src/config.ts";
import { problemsOf, REQUIRED } from "../helpers/config-env.ts";

const OLD_SECRET = "old-secret-being-replaced-0123456789-abcdef";
const JWKS = { JWT_SECRET: "", JWT_JWKS_URL: "https://auth.example.com/.well-known/jwks.json", JWT_ISSUER: "https://auth.example.com/", JWT_AUDIENCE: "wallet-alerts" };

describe("JWT_SECRET_PREVIOUS", () => {
  it("is read beside JWT_SECRET, without the white space at its ends, by the API and by the commands that mint", () => {
    expect(loadConfig({ ...REQUIRED, JWT_SECRET_PREVIOUS: `${OLD_SECRET}\n` }).jwt).toMatchObject({ secret: REQUIRED.JWT_SECRET, previousSecret: OLD_SECRET });
    expect(loadJwtConfig({ JWT_SECRET: REQUIRED.JWT_SECRET, JWT_SECRET_PREVIOUS: OLD_SECRET }).previousSecret).toBe(OLD_SECRET);
    expect(loadConfig(REQUIRED).jwt.previousSecret).toBeUndefined();
  });

  it("is refused shorter than 32 characters, as JWT_SECRET is", () => {
    expect(problemsOf({ JWT_SECRET_PREVIOUS: "short-old-secret" })).toBe("invalid configuration: JWT_SECRET_PREVIOUS: expected at least 32 characters");
  });

  it("is refused when it is the public placeholder", () => {
    expect(problemsOf({ JWT_SECRET_PREVIOUS: "change-me-to-32-or-more-random-characters" })).toContain("JWT_SECRET_PREVIOUS: this is the placeholder from .env.example");
  });

  it("is refused when it is JWT_SECRET itself, white space at the ends aside", () => {
    const message = problemsOf({ JWT_SECRET_PREVIOUS: ` ${REQUIRED.JWT_SECRET}\n` });
    expect(message).toBe("invalid configuration: JWT_SECRET_PREVIOUS is the same as JWT_SECRET: set it to the secret being replaced, or unset it");
  });

  it("is refused with JWT_JWKS_URL, which takes no HS256 token", () => {
    const message = problemsOf({ ...JWKS, JWT_SECRET_PREVIOUS: OLD_SECRET });
    expect(message).toBe(
      "invalid configuration: JWT_SECRET_PREVIOUS goes with JWT_SECRET, not JWT_JWKS_URL: an identity provider's JWKS lists its old and new keys itself",
    );
    expect(loadConfig({ ...REQUIRED, ...JWKS }).jwt.previousSecret).toBeUndefined();
  });

  it("is refused without JWT_SECRET", () => {
    expect(problemsOf({ JWT_SECRET: "", JWT_SECRET_PREVIOUS: OLD_SECRET })).toContain(
      "JWT_SECRET_PREVIOUS needs JWT_SECRET: it is the secret being replaced, accepted beside JWT_SECRET, never signed with",
    );
  });

  it("says of a JWT_SECRET too short only that, not that JWT_SECRET_PREVIOUS lacks it", () => {
    expect(problemsOf({ JWT_SECRET: "short", JWT_SECRET_PREVIOUS: OLD_SECRET })).toBe("invalid configuration: JWT_SECRET: expected at least 32 characters");
  });

  it("never puts either secret in a message", () => {
    for (const env of [{ JWT_SECRET_PREVIOUS: REQUIRED.JWT_SECRET }, { ...JWKS, JWT_SECRET_PREVIOUS: OLD_SECRET }, { JWT_SECRET_PREVIOUS: "short-old-secret" }]) {
      const message = problemsOf(env);
      for (const secret of [REQUIRED.JWT_SECRET, OLD_SECRET, "short-old-secret"]) expect(message).not.toContain(secret);
    }
  });
});
