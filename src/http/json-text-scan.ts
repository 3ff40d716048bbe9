// One pass over a JSON body's text before JSON.parse reads it (json-body.ts), for three things:
//
//   - How deep it nests. JSON.parse builds every array and object it is given, however deep: a
//     1 MiB body of arrays within arrays (`[[[[…]]]]`, half a million deep) held the event loop
//     80–200 ms, parsed, walked and collected, while every other caller's request waited (a flat
//     1 MiB body: 3 ms). No request nests deeper than about 10 levels (a Helius item's
//     events.swap.innerSwaps[].tokenInputs[]…), so a body deeper than MAX_JSON_DEPTH is refused
//     unparsed, and its scan stops at the bracket past the bound.
//   - How many arrays and objects it holds, at any depth: as costly as depth (many small shallow
//     arrays), so a body holding more than its route can use (json-container-bound.ts) is
//     refused unparsed too, its scan stopped at the one too many. One more count where the
//     depth is counted: under 1 ms more on 10 MiB of 120,000 token accounts (scan 11 ms, parse 21).
//   - How many keys it has, for the repeated-key check (repeated-keys.ts): every string followed
//     by a colon, outside any string, which in JSON is exactly its keys. Counted in the same
//     pass, which costs a little more than the quote search it replaced (a 10 MiB ingest body:
//     11 ms where that took 8; parsing it takes 34).
//
// Linear: a string is skipped to its closing quote by the native search (stringEnd), and every
// other character is read once. A text that is not JSON is scanned all the same: JSON.parse
// refuses it afterwards, unless it nests too deep or holds too many, which is said first. Pure:
// no I/O.
import { stringEnd } from "./repeated-keys.ts";

/** How deep arrays and objects may nest in a body: well above any request's (about 10). */
export const MAX_JSON_DEPTH = 64;

/** How deep a body may nest, and how many arrays and objects it may hold. */
export type JsonTextBounds = { maxDepth: number; maxContainers: number };

/** The first bound a body goes past, read in text order; or, within both, its keys and containers. */
export type JsonTextScan = { exceeds: "depth" | "containers" } | { exceeds: null; keys: number; containers: number };

const QUOTE = 0x22;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Whether `text` nests arrays and objects deeper than `maxDepth` or holds more than
 * `maxContainers` of them (brackets in strings are text), and if not, its keys and containers.
 */
export function scanJsonText(text: string, { maxDepth, maxContainers }: JsonTextBounds): JsonTextScan {
  let depth = 0;
  let containers = 0;
  let keys = 0;
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) {
      let next = stringEnd(text, at) + 1;
      let after = text.charCodeAt(next);
      while (isWhitespace(after)) after = text.charCodeAt(++next);
      if (after === COLON) keys += 1;
      at = next - 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth += 1;
      containers += 1;
      if (depth > maxDepth) return { exceeds: "depth" };
      if (containers > maxContainers) return { exceeds: "containers" };
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth -= 1;
    }
  }
  return { exceeds: null, keys, containers };
}
