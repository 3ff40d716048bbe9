// A key given twice in one JSON object ({"address":"A","address":"B"}): JSON.parse keeps the
// last value without a word, so a client bug that wrote a field twice ran the operation on a
// value the client never meant (a 409 about a wallet it never asked for, an alert with the
// other channel). DESIGN.md section 3 types bodies strictly; a repeated key is refused too.
// Pure: no I/O.
//
// Every JSON body is checked, native ingest's 10 MiB ones included, so the check must cost next
// to nothing when no key repeats, which is always but for a broken client. A value parsed from a
// text has as many keys as the text exactly when no key repeats (each repeat merges two into
// one). So two counts are compared:
//
//   - the text's keys, counted exactly before parsing by json-body.ts's one scan of the text
//     (json-text-scan.ts), or, given no count, keysInText, an upper bound: every quote followed
//     by `:` (after any whitespace), found by the native string search. Every key's closing
//     quote is one; a string value holding `\":` or starting with `:` adds one more, never less.
//   - keysInValue: the keys of the parsed value's objects, by a walk of its containers.
//
// Equal, the text has exactly the value's keys: none repeats. Different (a repeat, or one of
// those rare strings), the full scan (firstRepeatedKey) looks for the first repeat and its path.

/**
 * The path of the first key repeated in an object of `text` (JSON that JSON.parse gave `value`),
 * or undefined. `keys`: the text's keys, or at least as many (see the top of this file).
 */
export function repeatedKeyPath(text: string, value: unknown, keys = keysInText(text)): (string | number)[] | undefined {
  if (keys === keysInValue(value)) return undefined;
  return firstRepeatedKey(text);
}

const QUOTE = 0x22;
const COLON = 0x3a;
const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** How many quotes of `text` are followed by a colon: at least its number of keys (see the top of this file). */
export function keysInText(text: string): number {
  let count = 0;
  for (let at = text.indexOf('"'); at >= 0; at = text.indexOf('"', at + 1)) {
    let next = at + 1;
    let c = text.charCodeAt(next);
    while (isWhitespace(c)) c = text.charCodeAt(++next);
    if (c === COLON) count += 1;
  }
  return count;
}

/**
 * keysInText of a body's bytes, for a route that holds the bytes and not the text (the Helius
 * webhook, which reads its literals from them: decoding them again cost more than the count).
 * Counted from the colons, half as many as the quotes in Helius's items (every string value has
 * two quotes, and no colon): every colon that follows a quote (after any whitespace). Every key's
 * own colon is one; a colon inside a string adds one at most, never one less. Neither byte is
 * ever part of a longer UTF-8 character.
 */
export function keysInBytes(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(COLON); at >= 0; at = bytes.indexOf(COLON, at + 1)) {
    let before = at - 1;
    let c = bytes[before];
    while (c !== undefined && isWhitespace(c)) c = bytes[--before];
    if (c === QUOTE) count += 1;
  }
  return count;
}

/** The keys of every object in `value`, nested ones included. A walk with its own stack: JSON nested 100,000 deep is valid. */
export function keysInValue(value: unknown): number {
  let count = 0;
  const pending: object[] = value !== null && typeof value === "object" ? [value] : [];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (const item of next as unknown[]) if (item !== null && typeof item === "object") pending.push(item);
      continue;
    }
    for (const key in next) {
      count += 1;
      const item = (next as Record<string, unknown>)[key];
      if (item !== null && typeof item === "object") pending.push(item);
    }
  }
  return count;
}

type Frame = { array: boolean; index: number; expectingKey: boolean; keys: Set<string>; key: string };

/**
 * The path of the first key repeated within one object of `text` (JSON that JSON.parse
 * accepted), keys compared as decoded (`"a"` and `"\u0061"` are one key); undefined when none
 * is. Keys and array indices from the root: ["transactions", 3, "amount"].
 */
export function firstRepeatedKey(text: string): (string | number)[] | undefined {
  let first: (string | number)[] | undefined;
  eachRepeatedKey(text, (path) => {
    first = path;
    return false;
  });
  return first;
}

/**
 * Calls `found` with the path of every key given again within one object of `text` (as
 * firstRepeatedKey), in the text's order, until it returns false: a key given three times is
 * found twice.
 */
export function eachRepeatedKey(text: string, found: (path: (string | number)[]) => boolean | void): void {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const array = c === 0x5b;
      stack.push({ array, index: 0, expectingKey: !array, keys: new Set(), key: "" });
      i += 1;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      i += 1;
    } else if (c === 0x2c /* , */) {
      if (top?.array) top.index += 1;
      else if (top) top.expectingKey = true;
      i += 1;
    } else if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (top !== undefined && !top.array && top.expectingKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) {
          if (found([...stack.slice(0, -1).map((frame) => (frame.array ? frame.index : frame.key)), key]) === false) return;
        }
        top.keys.add(key);
        top.key = key;
        top.expectingKey = false;
      }
      i = end + 1;
    } else {
      // Whitespace, a colon, a number, true, false, null: nothing that names a place.
      i += 1;
    }
  }
}

/** The index of the quote closing the string whose opening quote is at `start`. */
export function stringEnd(text: string, start: number): number {
  for (let at = text.indexOf('"', start + 1); ; at = text.indexOf('"', at + 1)) {
    if (at < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c /* \ */) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
}
