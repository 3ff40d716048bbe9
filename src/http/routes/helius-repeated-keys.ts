// A key given twice in a Helius item (`"tokenAmount":1,"tokenAmount":1000`). JSON.parse keeps the
// last value without a word, so the item was stored as something it might not say: which of the
// two Helius meant, nobody can tell. Every other route refuses such a body whole (json-body.ts);
// here it is one more reason to refuse an item, and only that item: the delivery's other items are
// stored, this one is kept for an operator (helius.ts says why a delivery is never refused for
// one item). A delivery is an array, so every key is in an item; a body that is not an array is
// refused whole by the route's schema anyway.
//
// Only a key the service reads refuses its item: one of HeliusItemSchema's fields, at its place
// (`tokenTransfers.0.tokenAmount`). One given twice among the fields it ignores (accountData,
// instructions, an unknown field) is ignored with them, as a field of the wrong type there is.
//
// A refused item is kept as its text as sent, not as its value: the value holds only the last of
// the two, and kept so, posted again as kept, it would be stored with the very value it was
// refused for. Pure: no I/O.
import type { FieldIssue } from "../../ingest/helius-issues.ts";
import { GIVEN_TWICE, shortened } from "../error-handler.ts";
import { eachRepeatedKey, keysInBytes, keysInValue, stringEnd } from "../repeated-keys.ts";
import { HeliusItemSchema } from "./helius-schemas.ts";

export type ItemRepeats = {
  /** Each key read given twice, once, at its path (`body.3.fee`); none when only ignored keys repeat. */
  errors: FieldIssue[];
  /** The item's text as sent. */
  text: string;
};

/**
 * The items of a delivery (`items`, parsed from `body`) that give a key twice, by index. The cost
 * when none does (every delivery but a broken one) is two counts (see repeated-keys.ts): about
 * 2 µs an item of Helius's usual size, where parsing it takes 6.
 */
export function repeatedHeliusKeys(body: Buffer, items: readonly unknown[]): Map<number, ItemRepeats> {
  const repeats = new Map<number, ItemRepeats>();
  if (keysInBytes(body) === keysInValue(items)) return repeats;
  const text = body.toString("utf8");
  const readPaths = new Map<number, Set<string>>();
  eachRepeatedKey(text, ([index, ...steps]) => {
    if (typeof index !== "number") return;
    const paths = readPaths.get(index) ?? new Set<string>();
    readPaths.set(index, paths);
    if (reads(steps)) paths.add(shortened(["body", index, ...steps].join(".")));
  });
  const texts = itemTexts(text, new Set(readPaths.keys()));
  for (const [index, paths] of readPaths) {
    const itemText = texts.get(index);
    if (itemText !== undefined) repeats.set(index, { errors: [...paths].map((path) => ({ path, message: GIVEN_TWICE })), text: itemText });
  }
  return repeats;
}

type Shape = { properties?: Record<string, Shape>; items?: Shape; else?: Shape };

/** Whether the item schema reads the value at `steps` (keys and array indices under an item). */
function reads(steps: readonly (string | number)[]): boolean {
  let shape: Shape | undefined = HeliusItemSchema as Shape;
  for (const step of steps) {
    // A field of two shapes (`events`: [] or an object) names its object's fields in `else`.
    const object: Shape = shape.properties === undefined && shape.else !== undefined ? shape.else : shape;
    if (typeof step === "number") shape = shape.items;
    else shape = object.properties && Object.hasOwn(object.properties, step) ? object.properties[step] : undefined;
    if (shape === undefined) return false;
  }
  return true;
}

/** The text of each wanted element of the delivery's array, by index. */
function itemTexts(text: string, wanted: ReadonlySet<number>): Map<number, string> {
  const texts = new Map<number, string>();
  let depth = 0;
  let index = -1;
  let start = 0;
  for (let i = 0; i < text.length && texts.size < wanted.size; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = stringEnd(text, i);
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth += 1;
      if (depth === 2) {
        index += 1;
        start = i;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth === 2 && wanted.has(index)) texts.set(index, text.slice(start, i + 1));
      depth -= 1;
    }
  }
  return texts;
}
