// isExactAsDouble: whether an amount's decimal (a string's digits, or a JSON number literal
// with sign and exponent) reads back from a double unchanged. An amount that does not is
// refused at ingest: judged as the double, 9.99999999999999999 would reach a threshold of 10.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isExactAsDouble, plainDecimal } from "../../src/domain/decimal.ts";

/** The rule written out the slow way: the decimal's plain digits against the double's. */
const byPlainDigits = (text: string) => plainDecimal(text) === plainDecimal(String(Number(text)));

describe("isExactAsDouble", () => {
  it.each([
    "0",
    "-0",
    "-0.0",
    "007.50",
    "2500.75",
    "0.000000001",
    "12345.123456789",
    "123456789.12345679", // 17 digits, the double's own shortest form
    "0.30000000000000004",
    "99999999.99999999",
    "1000000000000000000000",
    "1e-7",
    "1.5E3",
    "2.5e+21",
    "100000000000000000000e-20",
    "0.000000000000001",
    "5e-324",
    "0e-999999999",
  ])("keeps %s", (text) => {
    expect(isExactAsDouble(text)).toBe(true);
  });

  it.each([
    "9.99999999999999999",
    "99999999.999999999",
    "99999999999999999",
    "0.12345678901234567890",
    "-9.99999999999999999",
    "1e-400", // below a double: read as 0
    "1.2345e-320", // subnormal: 1.2347e-320
    "1e400", // beyond a double: Infinity
    "9.99999999999999999e5",
  ])("refuses %s, which a double rounds", (text) => {
    expect(isExactAsDouble(text)).toBe(false);
  });

  it("judges an exponent of any size without writing it out (a billion zeros would not fit in a string)", () => {
    expect(() => byPlainDigits("1e-999999999")).toThrow(RangeError);
    expect(isExactAsDouble("1e-999999999")).toBe(false);
    expect(isExactAsDouble("1e999999999999")).toBe(false);
  });

  it("agrees with the plain digits on decimals without an exponent", () => {
    const decimal = fc
      .tuple(fc.stringMatching(/^[0-9]{1,20}$/), fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }))
      .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`));
    fc.assert(fc.property(decimal, (text) => isExactAsDouble(text) === byPlainDigits(text)));
  });

  it("agrees with the plain digits on literals with an exponent", () => {
    const literal = fc
      .tuple(fc.stringMatching(/^[1-9][0-9]{0,18}$/), fc.stringMatching(/^[0-9]{0,6}$/), fc.integer({ min: -330, max: 310 }), fc.constantFrom("e", "E"))
      .map(([whole, fraction, exponent, e]) => `${whole}${fraction ? `.${fraction}` : ""}${e}${exponent}`);
    fc.assert(fc.property(literal, (text) => isExactAsDouble(text) === byPlainDigits(text)));
  });
});
