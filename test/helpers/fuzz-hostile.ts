// Hostile values for the API's fuzz test (test/integration/api-fuzz.test.ts): text, numbers
// and percent-escapes that databases, parsers and encoders trip on.
import fc from "fast-check";

/** Percent-encodes the UTF-8 of a string (a lone surrogate becomes U+FFFD, as a client would send it). */
export const pct = (text: string): string =>
  [...Buffer.from(text, "utf8")]
    .map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`))
    .join("");

export const percentJunk = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "%", "%%", "%zz", "%0", "%00", "%ff", "%FF%FE", "%C0%AE", "%E2%82", "%ED%A0%80", "%2F", "%2f..%2f", "%2e%2e",
        "%3F", "%23", "%20", "%u0041", "%F0%9F%90%8B", "..", ".", "+", "%2B", "%5C", "%0A", "%0D%0A",
      ),
      fc.uint8Array({ minLength: 1, maxLength: 6 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")),
      fc.string({ unit: "grapheme-ascii", maxLength: 6 }).map(pct),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((parts) => parts.join(""));

const HOSTILE_STRINGS = [
  "", " ", "NaN", "Infinity", "-Infinity", "1e400", "-0", "0x10", "1", "-1", "null", "true", "undefined",
  "\u0000", "a\u0000b", "\ud800", "\udfff", "🐋", "é", "\u202e", "\ufeff", "\u2028", "'; drop table tracked_wallets; --",
  "%00", "../../etc/passwd", "<script>alert(1)</script>", "{{7*7}}", "${7*7}", "\\", "\"", "wal_", "alr_", "ntf_",
];

/** Text that databases, parsers and encoders trip on. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 80 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 65, max: 20_000 }).map((n) => "x".repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2_000 }).map((n) => "🐋".repeat(n)) },
);
/** Numbers at and beyond the ends of every range and column type. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      0, -0, -1, 0.5, 1.5, -1.5, 1e-9, 1e-10, 1e18, 1.0000001e18, 1e28, 1e29, 1e308, -1e308, 5e-324,
      2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 2 ** 63, 2 ** 64, 32_768, 604_801, 253_402_300_800,
    ),
  },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
);
/** A value of the wrong kind, or of the right kind at an extreme. */
export const wildValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 8 }), { maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constant([[[[[[[[[[[]]]]]]]]]]]) },
);
