import { randomBytes } from "node:crypto";

// Opaque, prefixed, roughly time-ordered identifiers (ULID-like: 48-bit time, 80 random bits),
// so ids sort by creation and a stray id says what it names.
export type IdPrefix = "wal" | "alr" | "evt" | "ntf" | "bat";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(16);
  let tail = "";
  for (let i = 0; i < 16; i++) tail += ALPHABET[random[i]! % 32];
  return `${prefix}_${time}${tail}`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`).test(value);
}
