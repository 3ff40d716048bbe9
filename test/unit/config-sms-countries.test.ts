// SMS_ALLOWED_COUNTRIES: the countries whose numbers SMS alerts may text. A code that matches no
// number's country is refused at start, since it would refuse what the operator meant to allow.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

describe("SMS_ALLOWED_COUNTRIES", () => {
  it("allows every country when unset or empty", () => {
    expect(loadConfig(REQUIRED).smsAllowedCountries).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, SMS_ALLOWED_COUNTRIES: "" }).smsAllowedCountries).toBeUndefined();
  });

  it("takes a comma list of ISO 3166 alpha-2 codes, upper-cased, without repeats", () => {
    expect(loadConfig({ ...REQUIRED, SMS_ALLOWED_COUNTRIES: "us, ca,GB,US" }).smsAllowedCountries).toEqual(["US", "CA", "GB"]);
  });

  it("refuses codes no phone number carries, naming them, and says the United Kingdom is GB", () => {
    expect(problemsOf({ SMS_ALLOWED_COUNTRIES: "US,UK,XX" })).toContain(
      "SMS_ALLOWED_COUNTRIES: expected ISO 3166 alpha-2 country codes such as US,CA: UK, XX are not (the United Kingdom is GB)",
    );
    expect(problemsOf({ SMS_ALLOWED_COUNTRIES: "USA" })).toContain("SMS_ALLOWED_COUNTRIES: expected ISO 3166 alpha-2 country codes such as US,CA: USA is not one");
  });

  it("refuses a list with no code in it rather than texting no one", () => {
    expect(problemsOf({ SMS_ALLOWED_COUNTRIES: " , " })).toContain("SMS_ALLOWED_COUNTRIES: expected a comma list of ISO 3166 alpha-2 country codes");
  });
});
