import { describe, expect, it } from "vitest";
import { firstRepeatedKey, keysInText, keysInValue, repeatedKeyPath } from "../../src/http/repeated-keys.ts";

const check = (text: string) => repeatedKeyPath(text, JSON.parse(text));

describe("repeatedKeyPath", () => {
  it.each([
    ['{"a":1,"a":2}', ["a"]],
    ['{"a":1, "b":{"c":[1,{"d":1,"e":2,"d":3}]}}', ["b", "c", 1, "d"]],
    ['[{"a":1},{"a":1,"b":2,"a":3}]', [1, "a"]],
    ['{"a" : 1 ,\n "\\u0061"\t: 2}', ["a"]],
    ['{"x\\\\":1,"x\\\\":2}', ["x\\"]],
    ['{"a":{"a":1},"a":2}', ["a"]],
  ])("finds the first repeated key of %s at %j", (text, path) => {
    expect(check(text)).toEqual(path);
  });

  it.each([
    '{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}',
    '{"a":"\\":\\":","b":":"}',
    '{"a\\"":1,"a":2}',
    '{"x\\\\":"\\\\","y":"\\\\\\""}',
    '"just a string: \\":"',
    "[1,2,[3]]",
  ])("finds none in %s", (text) => {
    expect(check(text)).toBeUndefined();
  });

  it("reads past a byte order mark, which the app's parser skips", () => {
    expect(repeatedKeyPath('\ufeff{"a":1,"a":2}', { a: 2 })).toEqual(["a"]);
    expect(repeatedKeyPath('\ufeff{"a":1}', { a: 1 })).toBeUndefined();
  });

  it("counts at least every key of the text, and exactly those of the value", () => {
    const text = '{"a":1,"b":"\\": x","c":[{"d":null}],"a":2}';
    expect(keysInText(text)).toBeGreaterThanOrEqual(5);
    expect(keysInValue(JSON.parse(text))).toBe(4);
    expect(firstRepeatedKey(text)).toEqual(["a"]);
  });

  it("walks a value nested 100,000 deep without overflowing the stack", () => {
    const depth = 100_000;
    const text = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    expect(keysInValue(JSON.parse(text))).toBe(depth);
    expect(check(text)).toBeUndefined();
  });
});
