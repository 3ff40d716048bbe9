// Which JSON NUMBER literals of a request body, at given paths, a double does not hold exactly,
// read from the body's raw bytes. Pure: no I/O. Used by every route that reads amounts: Helius
// deliveries (`[*].tokenTransfers[*].tokenAmount`, `[*].nativeTransfers[*].amount`, `[*].fee`),
// native ingest (`.transactions[*].amount`, `.accounts[*].balance`, …) and an alert's `.threshold`.
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
// ordinary body of up to 10 MiB (native ingest is the service's hot path). A lossless parser
// would parse every body a second time, in JavaScript, and turn every number into an object to
// convert back. Here instead:
//
//   1. mayHoldInexactNumber, on the bytes, no decoding: for each key a path ends in (`"amount"`,
//      `"fee"`, `"tokenAmount"`), the native byte search finds each occurrence and judges the
//      number literal after it, if any. 15 significant digits always read back from a double, so
//      a literal of at most 15 characters and no exponent is passed on sight (nearly every SOL
//      amount and fee); a longer one (Helius writes amounts of 1B-supply tokens with 16–17
//      digits, which do read back) costs one small check. A key can also be spelled with escapes
//      (`"token\u0041mount"`), which no search for the plain spelling finds: a body where some
//      `\u` could belong to such a key goes to step 2 whatever it holds.
//   2. scanInexactNumbers, only when step 1 found something: a JSON tokenizer (strings with
//      escapes, keys decoded, so `"token\u0041mount"` counts and a string holding
//      `"tokenAmount":1` does not) that follows the paths (a trie of the patterns) and reports
//      the inexact literals found exactly at them. A repeated key keeps its last value, as
//      JSON.parse does: a later value under the same key replaces (or clears) the verdict of an
//      earlier one, at every level, so a duplicated `tokenTransfers` or `tokenAmount` cannot
//      pin a verdict on the wrong transfer, as pairing the n-th literal with the n-th transfer
//      would.
import { isExactAsDouble } from "../domain/decimal.ts";

/** What is wrong with such a number, the start of every message about one. */
export const INEXACT_DIGITS = "has more significant digits than the service keeps exactly (about 15)";

/** The message for such an amount, the same on every route (and as for a Helius string amount). */
export const INEXACT_NUMBER_MESSAGE = `${INEXACT_DIGITS}; it would be judged as a rounded amount`;

/** One node of the paths' trie: what an array's elements, or an object's members, lead to. */
export type PathNode = {
  /** The node of every element, when the value here may be an array on a path (`[*]`). */
  any: PathNode | undefined;
  /** The node of each member, by key, when the value here may be an object on a path. */
  keys: Map<string, PathNode> | undefined;
  /** The index of the pattern that ends here: a number literal here is judged. */
  ends: number | undefined;
};

/** Compiled path patterns (numberPaths): what the pre-check searches for and the scan follows. */
export type NumberPaths = {
  readonly patterns: readonly string[];
  readonly root: PathNode;
  /** The keys the patterns end in, with their closing quote only (`amount"`: see mayHoldInexactNumber). */
  readonly endKeys: readonly Buffer[];
  /** Those keys' lengths in characters (their names are ASCII letters and digits). */
  readonly endKeyLengths: readonly number[];
};

const SEGMENT = /\.([A-Za-z][A-Za-z0-9]*)|\[\*\]/y;

/**
 * Compiles path patterns: each a list of `.name` (an object's member) and `[*]` (every element
 * of an array), from the body's root, ending in a name: `[*].tokenTransfers[*].tokenAmount` (a
 * root array of objects), `.transactions[*].amount` (a root object). Names are ASCII letters and
 * digits. A value reported is at exactly such a path; a number anywhere else is not judged.
 */
export function numberPaths(...patterns: string[]): NumberPaths {
  const root: PathNode = { any: undefined, keys: undefined, ends: undefined };
  const endNames = new Set<string>();
  patterns.forEach((pattern, index) => {
    let node = root;
    let last: string | undefined;
    SEGMENT.lastIndex = 0;
    while (SEGMENT.lastIndex < pattern.length) {
      const at = SEGMENT.lastIndex;
      const match = SEGMENT.exec(pattern);
      if (match === null) throw new Error(`number path ${JSON.stringify(pattern)}: cannot read it from ${at}`);
      last = match[1];
      if (last === undefined) {
        node = node.any ??= { any: undefined, keys: undefined, ends: undefined };
      } else {
        const keys = (node.keys ??= new Map());
        const next = keys.get(last) ?? { any: undefined, keys: undefined, ends: undefined };
        keys.set(last, next);
        node = next;
      }
    }
    if (last === undefined) throw new Error(`number path ${JSON.stringify(pattern)}: must end in a .name`);
    if (node.ends !== undefined) throw new Error(`number path ${JSON.stringify(pattern)}: given twice`);
    node.ends = index;
    endNames.add(last);
  });
  return {
    patterns,
    root,
    endKeys: [...endNames].map((name) => Buffer.from(`${name}"`)),
    endKeyLengths: [...endNames].map((name) => name.length),
  };
}

export type InexactNumber = {
  /** The index of the pattern (in numberPaths's arguments) the literal is at. */
  pattern: number;
  /** Where it is: keys and array indices from the root, e.g. ["transactions", 3, "amount"]. */
  path: (string | number)[];
  /** The array indices of `path` alone, e.g. [3]. */
  indices: number[];
  /** The literal as sent, e.g. "9.99999999999999999". */
  literal: string;
};

/** A UTF-8 byte order mark, which some serializers (.NET's Encoding.UTF8, PowerShell) write first. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The inexact number literals at `paths` of a body (the JSON body's UTF-8 bytes, which the app's
 * parser accepted), in document order; [] for nearly every body, at the cost of a byte search.
 * One leading byte order mark is skipped, as the app's parser (secure-json-parse) skips it: the
 * API takes such a body on every route, and the scan would otherwise find a character JSON does
 * not allow there and throw (a 500 for what is a 400, a Helius delivery lost whole).
 */
export function inexactNumberLiterals(body: Buffer, paths: NumberPaths): InexactNumber[] {
  const json = body.subarray(0, BOM.length).equals(BOM) ? body.subarray(BOM.length) : body;
  return mayHoldInexactNumber(json, paths) ? scanInexactNumbers(json.toString("utf8"), paths) : [];
}

// ---- Helius: the amounts and fee of each item -------------------------------------------------

export type InexactHeliusNumber = {
  /** The item's index in the delivery. */
  item: number;
  /** Where in the item, as an error path writes it: `tokenTransfers.1.tokenAmount`, `nativeTransfers.0.amount`, `fee`. */
  field: string;
  /** The literal as sent, e.g. "9.99999999999999999". */
  literal: string;
};

/**
 * The numbers of an item that become amounts: token amounts (UI units), and the lamports of
 * native transfers and of the fee, which a double holds exactly only up to 2^53
 * (10000000000000001 is read as 10000000000000000).
 */
const HELIUS_NUMBERS = numberPaths("[*].tokenTransfers[*].tokenAmount", "[*].nativeTransfers[*].amount", "[*].fee");

const asHeliusNumber = ({ path, literal }: InexactNumber): InexactHeliusNumber => ({
  item: path[0] as number,
  field: path.slice(1).join("."),
  literal,
});

/** inexactNumberLiterals at a Helius delivery's token amounts, native transfer amounts and fees. */
export function inexactHeliusNumbers(body: Buffer): InexactHeliusNumber[] {
  return inexactNumberLiterals(body, HELIUS_NUMBERS).map(asHeliusNumber);
}

// ---- Step 1: the byte search ------------------------------------------------------------------
// A literal is judged by isExactAsDouble (src/domain/decimal.ts), as a string amount's digits are.

const MINUS = 0x2d;
const POINT = 0x2e;

const ESCAPE = Buffer.from("\\u");

/**
 * Whether the body could hold a number literal a double does not hold exactly under a key some
 * path ends in. Never false when it holds one at a path (no false negatives); true also for a
 * body where such a key could be spelled with escapes, or one holding an inexact literal under
 * that key elsewhere than at a path.
 *
 * In valid JSON, `"tokenAmount"` quoted on both sides is a whole string token: a quote inside a
 * string is escaped, and the one before `t` cannot close a string (only `,:]}` or whitespace
 * follows a closing quote). Followed by `:` it is a key.
 *
 * The search is for the key without its opening quote (`tokenAmount"`), whose quote is then
 * checked: a search stops at each occurrence of the needle's first byte, and `"` is the most
 * frequent byte of JSON. A literal of at most 15 characters and no exponent is passed on sight
 * (nearly every native amount and fee); a longer one is judged by isExactAsDouble (17 digits
 * that read back, what a serializer of doubles writes, are exact) and the search goes on.
 */
export function mayHoldInexactNumber(body: Buffer, paths: NumberPaths): boolean {
  if (mayHoldEscapedKey(body, paths.endKeyLengths)) return true;
  for (const key of paths.endKeys) {
    for (let at = body.indexOf(key, 1); at >= 0; at = body.indexOf(key, at + key.length)) {
      if (body[at - 1] !== 0x22 /* " */) continue;
      let i = skipWhitespace(body, at + key.length);
      if (body[i] !== 0x3a /* : */) continue;
      i = skipWhitespace(body, i + 1);
      let end = i;
      let exponent = false;
      for (; end < body.length && isNumberChar(body[end]!); end += 1) exponent ||= body[end] === 0x65 || body[end] === 0x45;
      // Not a number, or one of at most 15 characters and no exponent: exact (see isExactAsDouble).
      if (end - i <= 15 && !exponent) continue;
      if (!isExactAsDouble(body.toString("latin1", i, end))) return true;
    }
  }
  return false;
}

/**
 * Whether some `\u` escape could be part of a key spelling one of the keys (of these lengths)
 * the paths end in: its run of letters, digits and backslashes (all such a spelling is made of)
 * is in quotes, followed by `:`, and as long as such a key with at least one of its characters
 * written as a 6-character escape (n characters: n + 5k, 1 ≤ k ≤ n). Conservative: a text that
 * only looks so (an escaped quote, another key of that length) costs the full scan. Each byte is
 * looked at a bounded number of times: the search resumes after the run it just looked at.
 */
function mayHoldEscapedKey(body: Buffer, keyLengths: readonly number[]): boolean {
  const longest = 6 * Math.max(...keyLengths);
  for (let at = body.indexOf(ESCAPE); at >= 0; ) {
    let start = at;
    while (start > 0 && at - start < longest && isKeyByte(body[start - 1]!)) start -= 1;
    let end = at + ESCAPE.length;
    while (end < body.length && end - at < longest && isKeyByte(body[end]!)) end += 1;
    const length = end - start;
    const quoted = body[start - 1] === 0x22 && body[end] === 0x22;
    const spells = (n: number) => length > n && length <= 6 * n && (length - n) % 5 === 0;
    if (quoted && keyLengths.some(spells) && body[skipWhitespace(body, end + 1)] === 0x3a) return true;
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

// ---- Step 2: the full scan --------------------------------------------------------------------

/**
 * What a container's values hold, by key or index: the literal of an inexact number at a path,
 * or a container holding one further down. A container holding none gets no entry.
 */
type Mark = string | Marks;
type Marks = Map<string | number, Mark>;

type Frame = {
  array: boolean;
  /** The index of the current element (arrays). */
  index: number;
  /** Whether a key comes next (objects). */
  expectingKey: boolean;
  /** This container's node in the paths' trie; undefined when no path goes through it. */
  node: PathNode | undefined;
  /** The node of the current element or member; undefined when no path goes through it. */
  child: PathNode | undefined;
  /** The current member's key, decoded (objects on a path). */
  key: string;
  marks: Marks | undefined;
};

/**
 * The full scan (see the top of this file) of `text`, JSON that JSON.parse accepted. Any other
 * text throws a SyntaxError or gives some answer; it never loops. Nesting is walked with a
 * stack of its own, not recursion; nothing is allocated per value but the frames, and keys are
 * decoded only in objects a path goes through.
 */
export function scanInexactNumbers(text: string, paths: NumberPaths): InexactNumber[] {
  const stack: Frame[] = [];
  let root: Mark | undefined;

  /** The node of the value starting now: the root's, an element's or the current member's. */
  const nodeHere = (): PathNode | undefined => {
    const top = stack[stack.length - 1];
    return top === undefined ? paths.root : top.child;
  };

  /** A value ended: record what it holds in its container, the last of a repeated key winning. */
  const settle = (mark: Mark | undefined) => {
    const top = stack[stack.length - 1];
    if (top === undefined) root = mark;
    // A mark is only ever made under a container on a path, whose keys are decoded.
    else if (mark !== undefined) (top.marks ??= new Map()).set(top.array ? top.index : top.key, mark);
    else if (!top.array && top.marks !== undefined) top.marks.delete(top.key);
  };

  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (isWhitespace(c) || c === 0x3a /* : */) {
      i += 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const node = nodeHere();
      const array = c === 0x5b;
      stack.push({ array, index: 0, expectingKey: !array, node, child: array ? node?.any : undefined, key: "", marks: undefined });
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
        top.expectingKey = false;
        const keys = top.node?.keys;
        if (keys === undefined) {
          top.child = undefined;
        } else {
          const raw = text.slice(i + 1, end);
          top.key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
          top.child = keys.get(top.key);
        }
      } else {
        settle(undefined);
      }
      i = end + 1;
    } else if (c === MINUS || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end += 1;
      const judged = nodeHere()?.ends !== undefined;
      const literal = judged ? text.slice(i, end) : "";
      settle(judged && !isExactAsDouble(literal) ? literal : undefined);
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
  const found: InexactNumber[] = [];
  if (root !== undefined) collect(root, paths.root, [], found);
  return found;
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

/**
 * The literals marked under `mark`, at `node` of the trie, in document order (marks are only
 * made along the trie's paths, so each key or index has its node). The depth is a path's length.
 */
function collect(mark: Mark, node: PathNode, path: (string | number)[], found: InexactNumber[]): void {
  if (typeof mark === "string") {
    found.push({ pattern: node.ends!, path: [...path], indices: path.filter((step) => typeof step === "number"), literal: mark });
    return;
  }
  for (const [step, inner] of mark) {
    const next = typeof step === "number" ? node.any : node.keys?.get(step);
    if (next === undefined) continue;
    path.push(step);
    collect(inner, next, path, found);
    path.pop();
  }
}
