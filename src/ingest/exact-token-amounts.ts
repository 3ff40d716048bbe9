// Which `tokenTransfers[].tokenAmount` NUMBER literals of a Helius delivery a double does not
// hold exactly, read from the delivery's raw bytes. Pure: no I/O.
//
// Why the raw bytes: an amount given as a string is judged by its digits (heliusItemAmountIssues
// refuses "9.99999999999999999", which a double reads as 10 and which would reach a threshold of
// 10 it never reached). The same amount written as a JSON number was rounded by JSON.parse before
// any check ran, so it was stored as 10 and fired the alert. Node 20's JSON.parse gives a reviver
// no source text, so the literal can only be read from the body as sent.
//
// Why a scanner of our own rather than a lossless parser (lossless-json and the like): the body
// stays parsed by the app's parser (Fastify's secure parser, the UTF-8 and surrogate checks);
// what is added is a verdict on a few literals, and it must cost nothing measurable on an
// ordinary delivery of up to 10 MiB. A lossless parser would parse every delivery a second time,
// in JavaScript, and turn every number into an object to convert back. Here instead:
//
//   1. mayHoldInexactTokenAmount, on the bytes, no decoding: the native byte search finds each
//      `"tokenAmount"` key and judges the number literal after it, if any. 15 significant
//      digits always read back from a double, so a literal of at most 15 digits and no exponent
//      is passed on sight; a longer one (Helius writes amounts of 1B-supply tokens with 16–17
//      digits, which do read back) costs one small check. A key can also be spelled with escapes
//      (`"token\u0041mount"`), which no search for the plain spelling finds: a body where some
//      `\u` could belong to such a key goes to step 2 whatever it holds.
//   2. scanInexactTokenAmounts, only when step 1 found something: a JSON tokenizer (strings with
//      escapes, keys decoded, so `"token\u0041mount"` counts and a string holding
//      `"tokenAmount":1` does not) that tracks each value's path and reports the inexact
//      literals at `[i].tokenTransfers[j].tokenAmount`. A repeated key keeps its last value, as
//      JSON.parse does: a later value under the same key replaces (or clears) the verdict of an
//      earlier one, at every level, so a duplicated `tokenTransfers` or `tokenAmount` cannot
//      pin a verdict on the wrong transfer, as pairing the n-th literal with the n-th transfer
//      would.

export type InexactTokenAmount = {
  /** The item's index in the delivery. */
  item: number;
  /** The transfer's index in the item's tokenTransfers. */
  transfer: number;
  /** The literal as sent, e.g. "9.99999999999999999". */
  literal: string;
};

/**
 * The inexact tokenAmount literals of a delivery (the JSON body's UTF-8 bytes, which JSON.parse
 * accepted), in document order; [] for nearly every delivery, at the cost of a byte search.
 */
export function inexactTokenAmounts(body: Buffer): InexactTokenAmount[] {
  return mayHoldInexactTokenAmount(body) ? scanInexactTokenAmounts(body.toString("utf8")) : [];
}

const MINUS = 0x2d;
const POINT = 0x2e;
const TOKEN_AMOUNT = "tokenAmount";

/**
 * The isExactAsDouble rule (src/domain/decimal.ts: the decimal reads back from a double
 * unchanged) for a JSON number literal, sign and exponent included. The value's digits and
 * decimal point are compared with those of the double's shortest form, without writing out the
 * exponent (`1e-999999999` would be a billion zeros). The sign does not change exactness: `-0`
 * is exact. A literal beyond a double's range (read as Infinity) or below it (read as 0) is not.
 */
export function isExactLiteral(literal: string): boolean {
  const unsigned = literal.charCodeAt(0) === MINUS ? literal.slice(1) : literal;
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

const KEY = Buffer.from('"tokenAmount"');
const ESCAPE = Buffer.from("\\u");

/**
 * Whether the body could hold a tokenAmount number literal that a double does not hold
 * exactly. Never false when it does (no false negatives); true also for a body where a key
 * could be spelled with escapes, or one holding an inexact tokenAmount out of tokenTransfers.
 *
 * In valid JSON, `"tokenAmount"` quoted on both sides is a whole string token: a quote inside a
 * string is escaped, and the one before `t` cannot close a string (only `,:]}` or whitespace
 * follows a closing quote). Followed by `:` it is a key.
 */
export function mayHoldInexactTokenAmount(body: Buffer): boolean {
  if (mayHoldEscapedKey(body)) return true;
  for (let at = body.indexOf(KEY); at >= 0; at = body.indexOf(KEY, at + KEY.length)) {
    let i = skipWhitespace(body, at + KEY.length);
    if (body[i] !== 0x3a /* : */) continue;
    i = skipWhitespace(body, i + 1);
    let end = i;
    let exponent = false;
    for (; end < body.length && isNumberChar(body[end]!); end += 1) exponent ||= body[end] === 0x65 || body[end] === 0x45;
    // Not a number, or one of at most 15 characters and no exponent: exact (see isExactLiteral).
    if (end - i <= 15 && !exponent) continue;
    if (!isExactLiteral(body.toString("latin1", i, end))) return true;
  }
  return false;
}

/**
 * Whether some `\u` escape could be part of a key spelling tokenAmount: its run of letters,
 * digits and backslashes (all a spelling of `tokenAmount` with escapes is made of) is 12 to 66
 * characters long (11, each written as itself or as a 6-character escape), in quotes, and
 * followed by `:`. Conservative: a text that only looks so (an escaped quote, a longer string)
 * costs the full scan. Each byte is looked at a bounded number of times: the search resumes
 * after the run it just looked at.
 */
function mayHoldEscapedKey(body: Buffer): boolean {
  const longest = 6 * TOKEN_AMOUNT.length;
  for (let at = body.indexOf(ESCAPE); at >= 0; ) {
    let start = at;
    while (start > 0 && at - start < longest && isKeyByte(body[start - 1]!)) start -= 1;
    let end = at + ESCAPE.length;
    while (end < body.length && end - at < longest && isKeyByte(body[end]!)) end += 1;
    const length = end - start;
    const quoted = body[start - 1] === 0x22 && body[end] === 0x22;
    if (quoted && length > TOKEN_AMOUNT.length && length <= longest && body[skipWhitespace(body, end + 1)] === 0x3a) return true;
    at = body.indexOf(ESCAPE, Math.max(end, at + ESCAPE.length));
  }
  return false;
}

const isKeyByte = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5c;

const isWhitespace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWhitespace(body: Buffer, from: number): number {
  let i = from;
  while (isWhitespace(body[i])) i += 1;
  return i;
}

const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === POINT || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS;

/**
 * What a container's values hold, by key or index: the literal of an inexact tokenAmount, or a
 * container holding one further down. A container holding none gets no entry.
 */
type Mark = string | Marks;
type Marks = Map<string | number, Mark>;

type Frame = {
  array: boolean;
  /** The index of the current element (arrays). */
  index: number;
  /** Whether a key comes next (objects). */
  expectingKey: boolean;
  /** Where the current member's key is in the text, between its quotes (objects). */
  keyStart: number;
  keyEnd: number;
  marks: Marks | undefined;
};

/**
 * The full scan (see the top of this file) of `text`, JSON that JSON.parse accepted. Any other
 * text throws a SyntaxError or gives some answer; it never loops. Nesting is walked with a
 * stack of its own, not recursion; nothing is allocated per value but the frames.
 */
export function scanInexactTokenAmounts(text: string): InexactTokenAmount[] {
  const stack: Frame[] = [];
  let root: Mark | undefined;

  const keyOf = (frame: Frame): string => {
    const raw = text.slice(frame.keyStart, frame.keyEnd);
    return raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
  };
  // Spelled with escapes, the key is longer than its 11 characters, and at most 6 times longer.
  const isTokenAmountKey = (frame: Frame): boolean => {
    const length = frame.keyEnd - frame.keyStart;
    if (length === TOKEN_AMOUNT.length) return text.startsWith(TOKEN_AMOUNT, frame.keyStart);
    return length > TOKEN_AMOUNT.length && length <= 6 * TOKEN_AMOUNT.length && keyOf(frame) === TOKEN_AMOUNT;
  };

  /** A value ended: record what it holds in its container, the last of a repeated key winning. */
  const settle = (mark: Mark | undefined) => {
    const top = stack[stack.length - 1];
    if (top === undefined) root = mark;
    else if (mark !== undefined) (top.marks ??= new Map()).set(top.array ? top.index : keyOf(top), mark);
    else if (!top.array && top.marks !== undefined) top.marks.delete(keyOf(top));
  };

  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (isWhitespace(c) || c === 0x3a /* : */) {
      i += 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push({ array: c === 0x5b, index: 0, expectingKey: c === 0x7b, keyStart: 0, keyEnd: 0, marks: undefined });
      i += 1;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      const frame = stack.pop();
      if (frame === undefined || frame.array !== (c === 0x5d)) throw unexpected(text, i);
      settle(frame.marks !== undefined && frame.marks.size > 0 ? frame.marks : undefined);
      i += 1;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top === undefined) throw unexpected(text, i);
      if (top.array) top.index += 1;
      else top.expectingKey = true;
      i += 1;
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top !== undefined && !top.array && top.expectingKey) {
        top.keyStart = i + 1;
        top.keyEnd = end;
        top.expectingKey = false;
      } else {
        settle(undefined);
      }
      i = end + 1;
    } else if (c === MINUS || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end += 1;
      const top = stack[stack.length - 1];
      const judged = top !== undefined && !top.array && isTokenAmountKey(top);
      const literal = judged ? text.slice(i, end) : "";
      settle(judged && !isExactLiteral(literal) ? literal : undefined);
      i = end;
    } else if (c === 0x74 /* t */ || c === 0x66 /* f */ || c === 0x6e /* n */) {
      const word = c === 0x74 ? "true" : c === 0x66 ? "false" : "null";
      if (!text.startsWith(word, i)) throw unexpected(text, i);
      settle(undefined);
      i += word.length;
    } else {
      throw unexpected(text, i);
    }
  }
  if (stack.length > 0) throw new SyntaxError("unexpected end of JSON");
  return heliusPaths(root);
}

const unexpected = (text: string, at: number) => new SyntaxError(`unexpected ${JSON.stringify(text[at])} at ${at}`);

/** The index of the quote closing the string whose opening quote is at `start`. */
function stringEnd(text: string, start: number): number {
  let at = start;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) throw new SyntaxError(`unterminated string at ${start}`);
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c /* \ */) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
}

/** The marks at `[item].tokenTransfers[transfer].tokenAmount`, in document order. */
function heliusPaths(root: Mark | undefined): InexactTokenAmount[] {
  const found: InexactTokenAmount[] = [];
  if (typeof root !== "object") return found;
  // Keys of an array are numbers and those of an object strings: an item or a transfer that
  // is not an object, or tokenTransfers that is not an array, holds no path of this shape.
  for (const [item, itemMarks] of root) {
    if (typeof item !== "number" || typeof itemMarks !== "object") continue;
    const transfers = itemMarks.get("tokenTransfers");
    if (typeof transfers !== "object") continue;
    for (const [transfer, transferMarks] of transfers) {
      if (typeof transfer !== "number" || typeof transferMarks !== "object") continue;
      const literal = transferMarks.get(TOKEN_AMOUNT);
      if (typeof literal === "string") found.push({ item, transfer, literal });
    }
  }
  return found;
}
