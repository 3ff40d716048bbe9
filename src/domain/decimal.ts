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

/**
 * Whether the decimal `text` reads back from a double unchanged: a string amount's digits, or a
 * JSON number literal with its sign and exponent. The value's digits and decimal point are
 * compared with those of the double's shortest form, without writing out the exponent
 * (`1e-999999999` would be a billion zeros). The sign does not change exactness: `-0` is exact.
 * A decimal beyond a double's range (read as Infinity) or below it (read as 0) is not.
 */
export function isExactAsDouble(text: string): boolean {
  const unsigned = text.startsWith("-") ? text.slice(1) : text;
  // At most 15 digits and no exponent: between 1e-14 and 1e15, and any decimal of 15
  // significant digits there reads back from a double (DBL_DIG).
  if (unsigned.length <= 15 || (unsigned.length === 16 && unsigned.includes("."))) {
    if (!/[eE]/.test(unsigned)) return true;
  }
  const value = Number(unsigned);
  if (!Number.isFinite(value)) return false;
  const shortest = String(value);
  // What a serializer of doubles writes (Helius's 17-digit amounts): the shortest form itself.
  if (shortest === unsigned) return true;
  return significand(unsigned) === significand(shortest);
}

/** "0012.500e1" → "125e3" (the significant digits, then where the decimal point is); zero → "0". */
function significand(decimal: string): string {
  const e = decimal.search(/[eE]/);
  const mantissa = e < 0 ? decimal : decimal.slice(0, e);
  const exponent = e < 0 ? 0 : Number(decimal.slice(e + 1));
  const dot = mantissa.indexOf(".");
  const wholeLength = dot < 0 ? mantissa.length : dot;
  const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const first = digits.search(/[1-9]/);
  if (first < 0) return "0";
  const last = digits.length - (/0*$/.exec(digits)?.[0].length ?? 0);
  return `${digits.slice(first, last)}e${wholeLength + exponent - first}`;
}

/** A decimal held exactly: units × 10^-scale. */
export type ExactDecimal = { units: bigint; scale: number };

/** The decimal a double stands for (its shortest form, which is the decimal sent for any amount read back exactly). */
function exactDecimal(value: number): ExactDecimal {
  const [whole = "0", fraction = ""] = plainDecimal(String(Math.abs(value))).split(".");
  const units = BigInt(whole + fraction);
  return { units: value < 0 ? -units : units, scale: fraction.length };
}

const rescaled = (d: ExactDecimal, scale: number): bigint => d.units * 10n ** BigInt(scale - d.scale);

/**
 * The exact sum of decimals as exact as each of them (amounts that read back from a double): 0.1
 * + 0.2 is 0.3, where adding doubles gives 0.30000000000000004, and a threshold at the exact sum
 * could be missed or met by chance.
 */
export function sumDecimals(values: readonly number[]): ExactDecimal {
  const parts = values.map(exactDecimal);
  const scale = Math.max(0, ...parts.map((part) => part.scale));
  return { units: parts.reduce((total, part) => total + rescaled(part, scale), 0n), scale };
}

/** Whether `d` is at least `threshold` (a decimal a double holds exactly, as every threshold is), compared exactly. */
export function decimalAtLeast(d: ExactDecimal, threshold: number): boolean {
  const t = exactDecimal(threshold);
  const scale = Math.max(d.scale, t.scale);
  return rescaled(d, scale) >= rescaled(t, scale);
}

/** The double nearest to `d`. */
export function decimalValue(d: ExactDecimal): number {
  const sign = d.units < 0n ? "-" : "";
  const digits = (d.units < 0n ? -d.units : d.units).toString().padStart(d.scale + 1, "0");
  return Number(d.scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -d.scale)}.${digits.slice(-d.scale)}`);
}
