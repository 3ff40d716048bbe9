import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, scanJsonText } from "../../src/http/json-text-scan.ts";
import { keysInValue } from "../../src/http/repeated-keys.ts";

const arrays = (depth: number, inner = "") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;
const scan = (text: string) => scanJsonText(text, MAX_JSON_DEPTH);

/** How deep `value` nests arrays and objects: 0 for a scalar. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

describe("scanJsonText's depth", () => {
  it("passes a body nested exactly as deep as the bound, and refuses one level more", () => {
    expect(scan(arrays(MAX_JSON_DEPTH))).toEqual({ tooDeep: false, keys: 0 });
    expect(scan(arrays(MAX_JSON_DEPTH + 1))).toEqual({ tooDeep: true });
    const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    expect(scan(objects(MAX_JSON_DEPTH))).toEqual({ tooDeep: false, keys: MAX_JSON_DEPTH });
    expect(scan(objects(MAX_JSON_DEPTH + 1))).toEqual({ tooDeep: true });
  });

  it("counts arrays and objects alike, and only those still open", () => {
    const mixed = `{"a":[{"b":[${arrays(MAX_JSON_DEPTH - 4)}]}]}`;
    expect(scan(mixed)).toEqual({ tooDeep: false, keys: 2 });
    expect(scan(`{"a":[{"b":[${arrays(MAX_JSON_DEPTH - 3)}]}]}`)).toEqual({ tooDeep: true });
    // Many siblings at the bound, never deeper: closed brackets give their level back.
    expect(scan(`[${Array(1000).fill(arrays(MAX_JSON_DEPTH - 1)).join(",")}]`).tooDeep).toBe(false);
  });

  it("reads brackets inside strings, keys and values alike, as text", () => {
    const brackets = "[{".repeat(MAX_JSON_DEPTH);
    expect(scan(`["${brackets}"]`)).toEqual({ tooDeep: false, keys: 0 });
    expect(scan(`{"${brackets}":"${brackets}"}`)).toEqual({ tooDeep: false, keys: 1 });
  });

  it("stays inside a string past an escaped quote, and leaves it at the quote after an escaped backslash", () => {
    const brackets = "[".repeat(MAX_JSON_DEPTH + 1);
    // \" does not close the string: the brackets after it are still text.
    expect(scan(`["a\\"${brackets}"]`)).toEqual({ tooDeep: false, keys: 0 });
    expect(scan(`["\\\\\\"${brackets}"]`)).toEqual({ tooDeep: false, keys: 0 });
    // \\ is a backslash: the quote after it closes the string, and the brackets after are JSON.
    expect(scan(`["a\\\\", ${arrays(MAX_JSON_DEPTH)}]`)).toEqual({ tooDeep: true });
    expect(scan(`["a\\\\", ${arrays(MAX_JSON_DEPTH - 1)}]`)).toEqual({ tooDeep: false, keys: 0 });
  });

  it("scans a text that is not JSON without failing, an unclosed string included", () => {
    expect(scan('{"a":"no end')).toEqual({ tooDeep: false, keys: 1 });
    expect(scan("]]]}}}")).toEqual({ tooDeep: false, keys: 0 });
    expect(scan(`${"[".repeat(MAX_JSON_DEPTH + 1)}`)).toEqual({ tooDeep: true });
    expect(scan("")).toEqual({ tooDeep: false, keys: 0 });
  });
});

describe("scanJsonText's keys", () => {
  it("counts every key once, and no string value, whatever the value holds", () => {
    const text = '{"a":"\\": x", "b" :\n{"c":[{"d":null}, ":"]}, "e\\"":"f"}';
    expect(scan(text)).toEqual({ tooDeep: false, keys: 5 });
    expect(keysInValue(JSON.parse(text))).toBe(5);
  });

  it("counts a key given twice twice, as the text says", () => {
    expect(scan('{"a":1,"a":2}')).toEqual({ tooDeep: false, keys: 2 });
  });

  it("agrees with the parsed value on every JSON text: its depth against the bound, and its keys", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 6 }), fc.boolean(), (value, bound, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const result = scanJsonText(text, bound);
        if (depthOf(value) > bound) expect(result).toEqual({ tooDeep: true });
        else expect(result).toEqual({ tooDeep: false, keys: keysInValue(JSON.parse(text)) });
      }),
      { numRuns: 500 },
    );
  });
});
