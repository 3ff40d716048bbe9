// Bitcoin-alphabet base58, as Solana uses for addresses (32 bytes) and signatures (64 bytes).
const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const INDEX = new Map([...ALPHABET].map((char, i) => [char, i]));

export function base58Encode(bytes: Uint8Array): string {
  const digits: number[] = [];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i]! << 8;
      digits[i] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  // Built as an array and joined: the result is one flat string. A string grown by `+=` is a
  // rope that V8 flattens again on its first comparison or hashing, which made sorting and
  // de-duplicating a batch of generated signatures ten times slower than parsed ones.
  const chars: string[] = [];
  for (const byte of bytes) {
    if (byte !== 0) break;
    chars.push("1");
  }
  for (let i = digits.length - 1; i >= 0; i--) chars.push(ALPHABET[digits[i]!]!);
  return chars.join("");
}

/** The decoded bytes, or undefined when the text is not base58. */
export function base58Decode(text: string): Uint8Array | undefined {
  const bytes: number[] = [];
  for (const char of text) {
    const value = INDEX.get(char);
    if (value === undefined) return undefined;
    let carry = value;
    for (let i = 0; i < bytes.length; i++) {
      carry += bytes[i]! * 58;
      bytes[i] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  for (const char of text) {
    if (char !== "1") break;
    bytes.push(0);
  }
  return Uint8Array.from(bytes.reverse());
}

const decodedLength = (text: string, max: number) =>
  text.length > 0 && text.length <= max ? base58Decode(text)?.length : undefined;

/** A Solana address: base58 that decodes to exactly 32 bytes. */
export const isAddress = (text: string): boolean => decodedLength(text, 44) === 32;

/** A transaction signature: base58 that decodes to exactly 64 bytes. */
export const isSignature = (text: string): boolean => decodedLength(text, 88) === 64;

/** Loose pre-checks for JSON schemas; the exact byte length is checked by isAddress/isSignature. */
export const ADDRESS_PATTERN = "^[1-9A-HJ-NP-Za-km-z]{32,44}$";
export const SIGNATURE_PATTERN = "^[1-9A-HJ-NP-Za-km-z]{64,88}$";
