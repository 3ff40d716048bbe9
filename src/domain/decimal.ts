// Numbers as decimals, as a person writes them: what a threshold's or an amount's digits are,
// whatever exponent form JavaScript prints them in. Pure.

/** "0012.500" → "12.5", "1.5e-7" → "0.00000015", "2e+21" → "2000000000000000000000" (no sign). */
export function plainDecimal(text: string): string {
  const [mantissa = "", exponent = "0"] = text.toLowerCase().split("e");
  const [whole = "", fraction = ""] = mantissa.split(".");
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  const padded = point <= 0 ? "0".repeat(1 - point) + digits : digits.padEnd(point, "0");
  const at = Math.max(point, 1);
  const integer = padded.slice(0, at).replace(/^0+(?=\d)/, "");
  const decimals = padded.slice(at).replace(/0+$/, "");
  return decimals ? `${integer}.${decimals}` : integer;
}

/** Digits after the decimal point of the shortest decimal that reads back as `value` ("1e-10": 10). */
export function decimalPlaces(value: number): number {
  return plainDecimal(String(Math.abs(value))).split(".")[1]?.length ?? 0;
}

/** Whether the decimal `text` (digits, an optional fraction) reads back from a double unchanged. */
export function isExactAsDouble(text: string): boolean {
  return plainDecimal(text) === plainDecimal(String(Number(text)));
}
