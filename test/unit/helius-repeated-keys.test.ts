import { describe, expect, it } from "vitest";
import { GIVEN_TWICE } from "../../src/http/error-handler.ts";
import { keysInBytes, keysInText, keysInValue } from "../../src/http/repeated-keys.ts";
import { repeatedHeliusKeys } from "../../src/http/routes/helius-repeated-keys.ts";
import { helius } from "../helpers/contract-samples.ts";

/** repeatedHeliusKeys of a delivery written as `texts`, one item each. */
const repeatsOf = (texts: string[]) => {
  const body = Buffer.from(`[${texts.join(",\n ")}]`);
  return repeatedHeliusKeys(body, JSON.parse(body.toString()) as unknown[]);
};
const item = '{"signature":"s","fee":5000,"nativeTransfers":[{"amount":1}],"description":"x"}';

describe("repeatedHeliusKeys", () => {
  it("finds none in Helius's own deliveries, nor in strings that only look like keys", () => {
    expect(repeatsOf(helius().map((value) => JSON.stringify(value))).size).toBe(0);
    expect(repeatsOf([item, '{"description":"a\\": b \\":","type":":x"}']).size).toBe(0);
  });

  it("names each key the service reads given twice in an item, once, in the text's order, and keeps the item's text as sent", () => {
    const twice = '{"signature":"s", "fee":5000,"fee":5, "nativeTransfers":[{"amount":1},{"amount":2,"amount":3,"amount":4}],"fee":6}';
    const repeats = repeatsOf([item, twice, item]);
    expect([...repeats.keys()]).toEqual([1]);
    expect(repeats.get(1)).toEqual({
      errors: [
        { path: "body.1.fee", message: GIVEN_TWICE },
        { path: "body.1.nativeTransfers.1.amount", message: GIVEN_TWICE },
      ],
      text: twice,
    });
  });

  it("compares keys as decoded, and reads them at every depth the schema does (events.compressed)", () => {
    const escaped = '{"signature":"s","f\\u0065e":1,"fee":2}';
    const event = '{"signature":"s","events":{"compressed":[{"treeId":"a","treeId":"b"}]}}';
    const repeats = repeatsOf([escaped, event]);
    expect(repeats.get(0)?.errors).toEqual([{ path: "body.0.fee", message: GIVEN_TWICE }]);
    expect(repeats.get(1)?.errors).toEqual([{ path: "body.1.events.compressed.0.treeId", message: GIVEN_TWICE }]);
  });

  it("gives no error for a key given twice among the fields it ignores, only the item's text", () => {
    const ignored = [
      '{"signature":"s","description":"a","description":"b"}',
      '{"signature":"s","accountData":[{"account":"a","account":"b"}]}',
      '{"signature":"s","transactionError":{"InstructionError":1,"InstructionError":2}}',
      '{"signature":"s","nativeTransfers":[{"amount":1,"note":1,"note":2}],"constructor":1,"constructor":2}',
    ];
    const repeats = repeatsOf(ignored);
    expect([...repeats.values()]).toEqual(ignored.map((text) => ({ errors: [], text })));
  });
});

describe("keysInBytes", () => {
  it("counts at least every key, as keysInText does, from the bytes", () => {
    for (const text of ['{"a":1,"b" : {"c":[1,{"d":"é:\\":"}]}}', '{"k":"\\":","é" :":"}', "[]", '{"a":"b"}']) {
      expect(keysInBytes(Buffer.from(text)), text).toBeGreaterThanOrEqual(keysInValue(JSON.parse(text)));
    }
    const delivery = JSON.stringify(helius());
    expect(keysInBytes(Buffer.from(delivery))).toBe(keysInText(delivery));
  });
});
