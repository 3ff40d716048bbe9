import { randomBytes } from "node:crypto";

// Opaque, prefixed, time-ordered identifiers (ULID-like: 48-bit time, 80 random bits), so ids
// sort by creation and a stray id says what it names. Within one process, ids made for the
// same millisecond count up from the first one's random part (ULID's monotonic mode): the
// events of one evaluation share their time and list in the order they were recorded.
// lld: a label load, one PUT or DELETE of /v1/risk/labels (label_changes.load_id).
export type IdPrefix = "wal" | "alr" | "evt" | "ntf" | "bat" | "lld";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case
const TAIL_DIGITS = 16;

let lastTime = -1;
let lastTail: number[] = [];

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const tail = now === lastTime ? increment(lastTail) : undefined;
  lastTail = tail ?? randomTail();
  lastTime = now;
  return `${prefix}_${time}${lastTail.map((digit) => ALPHABET[digit]).join("")}`;
}

function randomTail(): number[] {
  return [...randomBytes(TAIL_DIGITS)].map((byte) => byte % 32);
}

/** The tail plus one, or undefined when it is all 31s (then a fresh random one is taken). */
function increment(tail: readonly number[]): number[] | undefined {
  const next = [...tail];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]! += 1;
      return next;
    }
    next[i] = 0;
  }
  return undefined;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`).test(value);
}

/** When an id was made (Unix ms), read from its time part. */
export function idTime(id: string): number {
  const time = id.slice(id.indexOf("_") + 1, id.indexOf("_") + 11);
  let ms = 0;
  for (const digit of time) ms = ms * 32 + ALPHABET.indexOf(digit);
  return ms;
}
