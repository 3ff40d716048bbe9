import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, scanJsonText } from "../../src/http/json-text-scan.ts";
import { keysInValue } from "../../src/http/repeated-keys.ts";

const arrays = (depth: number, inner = "") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;
/** Bounds that only the depth tests reach. */
const MANY = 1_000_000;
const scan = (text: string, maxContainers = MANY) => scanJsonText(text, { maxDepth: MAX_JSON_DEPTH, maxContainers });
/** The scan of a text within both bounds. */
const within = (keys: number, containers: number) => ({ exceeds: null, keys, containers });
const TOO_DEEP = { exceeds: "depth" };
const TOO_MANY = { exceeds: "containers" };

/** How deep `value` nests arrays and objects: 0 for a scalar. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** How many arrays and objects `value` holds, itself included. */
function containersOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return 1 + Object.values(value).reduce<number>((sum, item) => sum + containersOf(item), 0);
}

describe("scanJsonText's depth", () => {
  it("passes a body nested exactly as deep as the bound, and refuses one level more", () => {
    expect(scan(arrays(MAX_JSON_DEPTH))).toEqual(within(0, MAX_JSON_DEPTH));
    expect(scan(arrays(MAX_JSON_DEPTH + 1))).toEqual(TOO_DEEP);
    const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    expect(scan(objects(MAX_JSON_DEPTH))).toEqual(within(MAX_JSON_DEPTH, MAX_JSON_DEPTH));
    expect(scan(objects(MAX_JSON_DEPTH + 1))).toEqual(TOO_DEEP);
  });

  it("counts arrays and objects alike, and only those still open", () => {
    const mixed = `{"a":[{"b":[${arrays(MAX_JSON_DEPTH - 4)}]}]}`;
    expect(scan(mixed)).toEqual(within(2, MAX_JSON_DEPTH));
    expect(scan(`{"a":[{"b":[${arrays(MAX_JSON_DEPTH - 3)}]}]}`)).toEqual(TOO_DEEP);
    // Many siblings at the bound, never deeper: closed brackets give their level back.
    expect(scan(`[${Array(1000).fill(arrays(MAX_JSON_DEPTH - 1)).join(",")}]`).exceeds).toBeNull();
  });

  it("reads brackets inside strings, keys and values alike, as text", () => {
    const brackets = "[{".repeat(MAX_JSON_DEPTH);
    expect(scan(`["${brackets}"]`)).toEqual(within(0, 1));
    expect(scan(`{"${brackets}":"${brackets}"}`)).toEqual(within(1, 1));
  });

  it("stays inside a string past an escaped quote, and leaves it at the quote after an escaped backslash", () => {
    const brackets = "[".repeat(MAX_JSON_DEPTH + 1);
    // \" does not close the string: the brackets after it are still text.
    expect(scan(`["a\\"${brackets}"]`)).toEqual(within(0, 1));
    expect(scan(`["\\\\\\"${brackets}"]`)).toEqual(within(0, 1));
    // \\ is a backslash: the quote after it closes the string, and the brackets after are JSON.
    expect(scan(`["a\\\\", ${arrays(MAX_JSON_DEPTH)}]`)).toEqual(TOO_DEEP);
    expect(scan(`["a\\\\", ${arrays(MAX_JSON_DEPTH - 1)}]`)).toEqual(within(0, MAX_JSON_DEPTH));
  });

  it("scans a text that is not JSON without failing, an unclosed string included", () => {
    expect(scan('{"a":"no end')).toEqual(within(1, 1));
    expect(scan("]]]}}}")).toEqual(within(0, 0));
    expect(scan(`${"[".repeat(MAX_JSON_DEPTH + 1)}`)).toEqual(TOO_DEEP);
    expect(scan("")).toEqual(within(0, 0));
  });
});

describe("scanJsonText's keys", () => {
  it("counts every key once, and no string value, whatever the value holds", () => {
    const text = '{"a":"\\": x", "b" :\n{"c":[{"d":null}, ":"]}, "e\\"":"f"}';
    expect(scan(text)).toEqual(within(5, 4));
    expect(keysInValue(JSON.parse(text))).toBe(5);
  });

  it("counts a key given twice twice, as the text says", () => {
    expect(scan('{"a":1,"a":2}')).toEqual(within(2, 1));
  });

  it("agrees with the parsed value on every JSON text: its depth and containers against the bounds, and its keys", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 40 }),
        fc.boolean(),
        (value, maxDepth, maxContainers, pretty) => {
          const text = JSON.stringify(value, null, pretty ? 2 : undefined);
          const result = scanJsonText(text, { maxDepth, maxContainers });
          const tooDeep = depthOf(value) > maxDepth;
          const tooMany = containersOf(value) > maxContainers;
          if (tooDeep && !tooMany) expect(result).toEqual(TOO_DEEP);
          else if (tooMany && !tooDeep) expect(result).toEqual(TOO_MANY);
          else if (tooDeep && tooMany) expect(result.exceeds).not.toBeNull();
          else expect(result).toEqual(within(keysInValue(JSON.parse(text)), containersOf(value)));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("scanJsonText's containers", () => {
  const siblings = (count: number, item = "[]") => `[${Array(count - 1).fill(item).join(",")}]`;

  it("passes a body holding exactly as many arrays and objects as the bound, and refuses one more", () => {
    expect(scan(siblings(50), 50)).toEqual(within(0, 50));
    expect(scan(siblings(51), 50)).toEqual(TOO_MANY);
    const objects = `{"a":{},"b":[{}],"c":{"d":[]}}`;
    expect(scan(objects, 6)).toEqual(within(4, 6));
    expect(scan(objects, 5)).toEqual(TOO_MANY);
  });

  it("counts every array and object at any depth, the review's shallow ones as nested ones", () => {
    // `[[[[0]]]],…`: never deeper than 5, four containers each.
    const shallow = `[${Array(1000).fill(arrays(4, "0")).join(",")}]`;
    expect(scan(shallow, 4001)).toEqual(within(0, 4001));
    expect(scan(shallow, 4000)).toEqual(TOO_MANY);
    expect(scan(arrays(10), 10)).toEqual(within(0, 10));
    expect(scan(arrays(10), 9)).toEqual(TOO_MANY);
  });

  it("does not count brackets inside strings, keys and values alike", () => {
    const brackets = "[{".repeat(1000);
    expect(scan(`["${brackets}","${brackets}"]`, 1)).toEqual(within(0, 1));
    // An escaped quote does not end the string: the brackets after it are text still.
    expect(scan(`{"${brackets}":"${brackets}\\"${brackets}"}`, 1)).toEqual(within(1, 1));
  });

  it("says the bound the text goes past first, depth before containers at the same bracket", () => {
    const bounds = { maxDepth: 2, maxContainers: 2 };
    expect(scanJsonText("[[[]]]", bounds)).toEqual(TOO_DEEP);
    expect(scanJsonText("[[],[]]", bounds)).toEqual(TOO_MANY);
    // The fourth bracket is one container too many; the fifth, had it been read, one level too deep.
    expect(scanJsonText("[[],[],[[]]]", { maxDepth: 2, maxContainers: 3 })).toEqual(TOO_MANY);
  });
});
