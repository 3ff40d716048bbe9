// A tokenAmount sent as a JSON number is judged by the literal sent, as a string one is by its
// digits: JSON.parse reads 9.99999999999999999 as 10, which reached a large_transfer threshold
// of 10 the transfer never reached. These read the literals from the body's bytes.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  inexactNumberLiterals,
  inexactHeliusNumbers,
  mayHoldInexactNumber,
  numberPaths,
  scanInexactNumbers,
  type InexactNumber,
  type NumberPaths,
} from "../../src/ingest/exact-token-amounts.ts";
import { isExactAsDouble } from "../../src/domain/decimal.ts";

const INEXACT = "9.99999999999999999";
const TOKEN_AMOUNTS = numberPaths("[*].tokenTransfers[*].tokenAmount");
const HELIUS_NUMBERS = numberPaths("[*].tokenTransfers[*].tokenAmount", "[*].nativeTransfers[*].amount", "[*].fee");

type InexactTokenAmount = { item: number; transfer: number; literal: string };

/** inexactHeliusNumbers's tokenAmount verdicts, by item and transfer. */
const inexactTokenAmounts = (body: Buffer): InexactTokenAmount[] =>
  inexactHeliusNumbers(body).flatMap(({ item, field, literal }) => {
    const [list, transfer, key] = field.split(".");
    return list === "tokenTransfers" && key === "tokenAmount" ? [{ item, transfer: Number(transfer), literal }] : [];
  });
const mayHoldInexactTokenAmount = (body: Buffer): boolean => mayHoldInexactNumber(body, TOKEN_AMOUNTS);
const scanInexactTokenAmounts = (text: string) => scanInexactNumbers(text, TOKEN_AMOUNTS);

/** The verdicts for `text`, checked against what JSON.parse made of each path reported. */
function found(text: string): InexactTokenAmount[] {
  const body = Buffer.from(text);
  const result = inexactTokenAmounts(body);
  const parsed = JSON.parse(text) as Array<{ tokenTransfers: Array<{ tokenAmount: unknown }> }>;
  for (const { item, transfer, literal } of result) {
    expect(parsed[item]!.tokenTransfers[transfer]!.tokenAmount).toBe(Number(literal));
  }
  // The pre-check never misses what the scan finds.
  if (scanInexactTokenAmounts(text).length > 0) expect(mayHoldInexactTokenAmount(body)).toBe(true);
  return result;
}

const delivery = (...amounts: string[][]) =>
  `[${amounts.map((transfers) => `{"signature":"s","tokenTransfers":[${transfers.map((a) => `{"mint":"m","tokenAmount":${a}}`).join(",")}]}`).join(",")}]`;

describe("inexactHeliusNumbers: the tokenAmount literals of a delivery a double rounds", () => {
  it("finds none in a delivery of exact amounts, long ones and exponent forms included, and does not scan it", () => {
    const text = delivery(["3", "452.318912", "123456789.12345679"], ["1e-7", "1.5E3", "-0", "0"]);
    expect(mayHoldInexactTokenAmount(Buffer.from(text))).toBe(false);
    expect(found(text)).toEqual([]);
  });

  it("finds none in the Helius fixtures, amounts and fees included, and does not scan them", () => {
    for (const name of ["sol-transfer", "usdc-transfer", "swap", "nft-sale", "stake-sol", "failed-transfer", "unknown-type"]) {
      const body = readFileSync(new URL(`../fixtures/helius/${name}.json`, import.meta.url));
      expect(mayHoldInexactNumber(body, HELIUS_NUMBERS), name).toBe(false);
      expect(inexactHeliusNumbers(body), name).toEqual([]);
    }
  });

  it("finds each inexact literal at its item and transfer, in document order", () => {
    expect(found(delivery(["1", INEXACT], ["2"], ["99999999.999999999", "1e-400", "0.5"]))).toEqual([
      { item: 0, transfer: 1, literal: INEXACT },
      { item: 2, transfer: 0, literal: "99999999.999999999" },
      { item: 2, transfer: 1, literal: "1e-400" },
    ]);
  });

  it("goes on to the full scan exactly when its one tokenAmount literal is inexact, whatever the literal", () => {
    const literal = fc
      .tuple(
        fc.constantFrom("", "-"),
        fc.stringMatching(/^(0|[1-9][0-9]{0,24})$/),
        fc.option(fc.stringMatching(/^[0-9]{1,24}$/), { nil: undefined }),
        fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.integer({ min: 0, max: 400 })), { nil: undefined }),
      )
      .map(([sign, whole, fraction, exponent]) => `${sign}${whole}${fraction === undefined ? "" : `.${fraction}`}${exponent === undefined ? "" : exponent.join("")}`);
    const space = fc.constantFrom("", " ", "\n\t ");
    fc.assert(
      fc.property(literal, space, space, (text, before, after) => {
        const body = Buffer.from(`[{"tokenTransfers":[{"mint":"m","tokenAmount"${before}:${after}${text}}]}]`);
        expect(mayHoldInexactTokenAmount(body)).toBe(!isExactAsDouble(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it("reads pretty-printed JSON as well", () => {
    const text = JSON.stringify([{ tokenTransfers: [{ tokenAmount: 1 }, { tokenAmount: 2 }] }], null, 2).replace(": 2", ` :\n\t ${INEXACT}`);
    expect(found(text)).toEqual([{ item: 0, transfer: 1, literal: INEXACT }]);
  });

  it("counts a key spelled with escapes", () => {
    const escaped = `[{"tokenTransfers":[{"tokenAmount":1},{"token\\u0041mount":${INEXACT}}]}]`;
    expect(found(escaped)).toEqual([{ item: 0, transfer: 1, literal: INEXACT }]);
    const allEscaped = `[{"tokenTransfers":[{"${[..."tokenAmount"].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}":${INEXACT}}]}]`;
    expect(found(allEscaped)).toEqual([{ item: 0, transfer: 0, literal: INEXACT }]);
    expect(found(`[{"token\\u0054ransfers":[{"tokenAmount":${INEXACT}}]}]`)).toEqual([{ item: 0, transfer: 0, literal: INEXACT }]);
  });

  it("does not scan a delivery whose escapes cannot spell a key, such as an escaped & in a description", () => {
    const text = `[{"description":"A \\u0026 B \\u00e9","tokenTransfers":[{"tokenAmount":1}]}]`;
    expect(mayHoldInexactTokenAmount(Buffer.from(text))).toBe(false);
  });

  it("ignores look-alike text inside strings, keys and values alike", () => {
    const inValue = `[{"description":"{\\"tokenAmount\\":${INEXACT}}","tokenTransfers":[{"tokenAmount":1}]}]`;
    expect(found(inValue)).toEqual([]);
    const inKey = `[{"tokenTransfers":[{"\\"tokenAmount\\":${INEXACT}":1,"tokenAmount":2}]}]`;
    expect(found(inKey)).toEqual([]);
    const braces = `[{"memo":"[{\\"tokenTransfers\\":[{","tokenTransfers":[{"x":"}]}\\\\","tokenAmount":${INEXACT}}]}]`;
    expect(found(braces)).toEqual([{ item: 0, transfer: 0, literal: INEXACT }]);
    expect(found(`[{"tokenTransfers":[{"tokenAmount":"${INEXACT}"}]}]`)).toEqual([]);
  });

  it("reports only the path the service reads, items[i].tokenTransfers[j].tokenAmount", () => {
    const elsewhere = JSON.stringify([
      {
        tokenAmount: 0,
        accountData: [{ tokenBalanceChanges: [{ rawTokenAmount: { tokenAmount: 0 } }] }],
        events: { swap: { tokenOutputs: [{ tokenAmount: 0 }] } },
        junk: [[[{ tokenTransfers: [{ tokenAmount: 0 }] }]]],
        tokenTransfers: [{ nested: { tokenAmount: 0 } }, { tokenAmount: 0 }],
      },
      [{ tokenTransfers: [{ tokenAmount: 0 }] }],
      { tokenTransfers: { 0: { tokenAmount: 0 } } },
      { tokenTransfers: [[{ tokenAmount: 0 }]] },
    ]).replaceAll('"tokenAmount":0', `"tokenAmount":${INEXACT}`);
    expect(found(elsewhere)).toEqual([{ item: 0, transfer: 1, literal: INEXACT }]);
  });

  it("goes through arrays nested deeper than a call stack would", () => {
    const depth = 100_000;
    const text = `[{"junk":${"[".repeat(depth)}${"]".repeat(depth)},"tokenTransfers":[{"tokenAmount":${INEXACT}}]}]`;
    expect(found(text)).toEqual([{ item: 0, transfer: 0, literal: INEXACT }]);
  });

  describe("a repeated key keeps its last value, as JSON.parse does", () => {
    it.each([
      ["an inexact tokenAmount repeated as an exact one", `[{"tokenTransfers":[{"tokenAmount":${INEXACT},"tokenAmount":10}]}]`, []],
      ["an exact tokenAmount repeated as an inexact one", `[{"tokenTransfers":[{"tokenAmount":10,"tokenAmount":${INEXACT}}]}]`, [[0, 0]]],
      ["an inexact tokenAmount repeated as a string", `[{"tokenTransfers":[{"tokenAmount":${INEXACT},"tokenAmount":"5"}]}]`, []],
      ["an inexact tokenAmount repeated as an object", `[{"tokenTransfers":[{"tokenAmount":${INEXACT},"tokenAmount":{"a":1}}]}]`, []],
      ["tokenTransfers repeated, the inexact list first", `[{"tokenTransfers":[{"tokenAmount":${INEXACT}}],"tokenTransfers":[{"tokenAmount":1}]}]`, []],
      ["tokenTransfers repeated as an empty list", `[{"tokenTransfers":[{"tokenAmount":${INEXACT}}],"tokenTransfers":[]}]`, []],
      ["tokenTransfers repeated as null", `[{"tokenTransfers":[{"tokenAmount":${INEXACT}}],"tokenTransfers":null}]`, []],
      ["tokenTransfers repeated, the inexact list last", `[{"tokenTransfers":[{"tokenAmount":1}],"tokenTransfers":[{"tokenAmount":2},{"tokenAmount":${INEXACT}}]}]`, [[0, 1]]],
      // Pairing the n-th literal with the n-th transfer would name transfer 2, which does not exist.
      ["a transfer repeating its tokenAmount before the inexact one", `[{"tokenTransfers":[{"tokenAmount":1,"tokenAmount":2},{"tokenAmount":${INEXACT}}]}]`, [[0, 1]]],
      // …and here transfer 0, whose tokenAmount JSON.parse keeps as 1.
      ["a transfer repeating an inexact tokenAmount as an exact one", `[{"tokenTransfers":[{"tokenAmount":${INEXACT},"tokenAmount":1},{"tokenAmount":2}]}]`, []],
      ["the same key spelled plainly and with an escape", `[{"tokenTransfers":[{"tokenAmount":${INEXACT},"token\\u0041mount":1}]}]`, []],
    ] as const)("%s", (_label, text, expected) => {
      expect(found(text).map(({ item, transfer }) => [item, transfer])).toEqual(expected);
    });
  });

  it("finds exactly the inexact literals JSON.parse kept, in any delivery, however its keys repeat", () => {
    // Each literal reads as a value of its own, so the parsed body says which one was kept:
    // 10, 100000000 and 0 only come from the inexact ones.
    const ROUNDED = new Set([10, 100_000_000, 0]);
    const literal = fc.constantFrom("1", "452.318912", "123456789.12345679", "1e-7", "1.5E3", INEXACT, "99999999.999999999", "1e-400");
    const key = fc.constantFrom('"tokenAmount"', '"token\\u0041mount"', '"mint"');
    const value = fc.oneof(literal, fc.constantFrom('"x"', "null", "[]", `"${INEXACT}"`, `{"tokenAmount":${INEXACT}}`));
    const object = (members: fc.Arbitrary<string>) => fc.array(members, { maxLength: 4 }).map((list) => `{${list.join(",")}}`);
    const transfer = object(fc.tuple(key, value).map(([k, v]) => `${k}:${v}`));
    const transfers = fc.oneof(fc.array(transfer, { maxLength: 4 }).map((list) => `[${list.join(",")}]`), fc.constant("null"));
    const item = object(fc.oneof(transfers.map((t) => `"tokenTransfers":${t}`), fc.constant('"fee":5000')));
    const body = fc.array(item, { minLength: 1, maxLength: 4 }).map((items) => `[${items.join(",")}]`);
    fc.assert(
      fc.property(body, (text) => {
        const parsed = JSON.parse(text) as Array<{ tokenTransfers?: Array<Record<string, unknown>> | null }>;
        const expected = parsed.flatMap((it, i) =>
          (it.tokenTransfers ?? []).flatMap((t, j) => (typeof t.tokenAmount === "number" && ROUNDED.has(t.tokenAmount) ? [[i, j]] : [])),
        );
        expect(found(text).map(({ item, transfer }) => [item, transfer])).toEqual(expected);
      }),
    );
  });
});

describe("inexactHeliusNumbers: the lamport literals of native transfers and fees a double rounds", () => {
  // 2^53 + 1: the first whole number a double does not hold (read as 9007199254740992).
  const LAMPORTS = "9007199254740993";

  it("finds each one at its item and field, beside the tokenAmounts, in document order", () => {
    const text =
      `[{"fee":5000,"nativeTransfers":[{"amount":1500000000},{"amount":${LAMPORTS}}],"tokenTransfers":[{"tokenAmount":${INEXACT}}]},` +
      `{"fee":18446744073709551615,"nativeTransfers":[{"amount":10000000000000001}]},` +
      `{"fee":5000,"nativeTransfers":[{"amount":25000000000000000},{"amount":9000000000000001}]}]`;
    expect(inexactHeliusNumbers(Buffer.from(text))).toEqual([
      { item: 0, field: "nativeTransfers.1.amount", literal: LAMPORTS },
      { item: 0, field: "tokenTransfers.0.tokenAmount", literal: INEXACT },
      { item: 1, field: "fee", literal: "18446744073709551615" },
      { item: 1, field: "nativeTransfers.0.amount", literal: "10000000000000001" },
    ]);
  });

  it("reports only the paths the service reads: an amount elsewhere in the item is not judged", () => {
    const text = JSON.stringify([
      {
        amount: 0,
        events: { nft: { amount: 0, fee: 0 }, compressed: [{ amount: 0 }] },
        accountData: [{ nativeTransfers: [{ amount: 0 }] }],
        nativeTransfers: [{ nested: { amount: 0 } }, { amount: 1 }],
      },
      { nativeTransfers: { 0: { amount: 0 } }, fees: [{ fee: 0 }] },
    ]).replaceAll(/"(amount|fee)":0/g, `"$1":${LAMPORTS}`);
    expect(inexactHeliusNumbers(Buffer.from(text))).toEqual([]);
  });
});

describe("inexactNumberLiterals: the number literals at given paths a double rounds", () => {
  const NATIVE = numberPaths(".transactions[*].amount", ".transactions[*].fee");

  /** The verdicts for `text` at `paths`, checked against what JSON.parse made of each path reported. */
  function foundAt(text: string, paths: NumberPaths = NATIVE): InexactNumber[] {
    const body = Buffer.from(text);
    const result = inexactNumberLiterals(body, paths);
    const parsed: unknown = JSON.parse(text);
    for (const { path, indices, literal } of result) {
      const value = path.reduce<unknown>((at, step) => (at as Record<string | number, unknown>)[step], parsed);
      expect(value).toBe(Number(literal));
      expect(indices).toEqual(path.filter((step) => typeof step === "number"));
    }
    // The pre-check never misses what the scan finds.
    if (scanInexactNumbers(text, paths).length > 0) expect(mayHoldInexactNumber(body, paths)).toBe(true);
    return result;
  }

  /** A native batch: each transaction's amount and fee written as the literals given. */
  const batch = (...txs: Array<[amount: string, fee?: string]>) =>
    `{"transactions":[${txs.map(([amount, fee = "0.000005"]) => `{"signature":"s","type":"transfer","amount":${amount},"token":"SOL","fee":${fee},"status":"success"}`).join(",")}]}`;

  describe("numberPaths", () => {
    it("compiles patterns of .name and [*] from the root, sharing their prefixes", () => {
      const paths = numberPaths(".transactions[*].amount", ".transactions[*].fee", "[*].tokenTransfers[*].tokenAmount");
      expect(paths.patterns).toEqual([".transactions[*].amount", ".transactions[*].fee", "[*].tokenTransfers[*].tokenAmount"]);
      expect(paths.root.keys?.get("transactions")?.any?.keys?.size).toBe(2);
      expect(paths.root.any?.keys?.get("tokenTransfers")?.any?.keys?.get("tokenAmount")?.ends).toBe(2);
    });

    it.each([
      ["", "an empty pattern"],
      ["[*]", "one not ending in a name"],
      [".transactions[*]", "one not ending in a name"],
      ["transactions[*].amount", "a name without its dot"],
      [".transactions[0].amount", "an index other than *"],
      [".tx_list[*].amount", "a name of other than letters and digits"],
      [".a.b ", "trailing text"],
    ])("refuses %j (%s)", (pattern) => {
      expect(() => numberPaths(pattern)).toThrow(/number path/);
    });

    it("refuses a pattern given twice", () => {
      expect(() => numberPaths(".a[*].b", ".a[*].b")).toThrow(/given twice/);
    });
  });

  it("finds none in a native batch of exact numbers, long ones and exponent forms included, and does not scan it", () => {
    const text = batch(["1.5"], ["0.000001", "5e-7"], ["123456789.12345679", "0.30000000000000004"], ["1e21"], ["0", "0"], ["99999999.99999999"]);
    expect(mayHoldInexactNumber(Buffer.from(text), NATIVE)).toBe(false);
    expect(foundAt(text)).toEqual([]);
  });

  it("finds each inexact amount and fee at its path, with its pattern, index and literal, in document order", () => {
    const text = batch(["1"], [INEXACT], ["2", "0.00000500000000000000001"], ["99999999.999999999", "1e-400"]);
    expect(foundAt(text)).toEqual([
      { pattern: 0, path: ["transactions", 1, "amount"], indices: [1], literal: INEXACT },
      { pattern: 1, path: ["transactions", 2, "fee"], indices: [2], literal: "0.00000500000000000000001" },
      { pattern: 0, path: ["transactions", 3, "amount"], indices: [3], literal: "99999999.999999999" },
      { pattern: 1, path: ["transactions", 3, "fee"], indices: [3], literal: "1e-400" },
    ]);
  });

  it("reports only the paths given: the same key elsewhere is not judged", () => {
    const elsewhere = JSON.stringify({
      amount: 0,
      meta: { transactions: [{ amount: 0 }] },
      transactions: [{ nested: { amount: 0 } }, [{ amount: 0 }], { amount: 0, fee: 0 }, { tokenTransfers: [{ amount: 0 }] }],
      accounts: [{ fee: 0 }],
    }).replaceAll(/"(amount|fee)":0/g, `"$1":${INEXACT}`);
    expect(foundAt(elsewhere).map(({ path }) => path)).toEqual([
      ["transactions", 2, "amount"],
      ["transactions", 2, "fee"],
    ]);
    // A root array is not the root object the pattern starts with, nor is transactions an object.
    expect(foundAt(`[{"transactions":[{"amount":${INEXACT}}]}]`)).toEqual([]);
    expect(foundAt(`{"transactions":{"0":{"amount":${INEXACT}}}}`)).toEqual([]);
  });

  it("follows nested arrays of several patterns at once (the accounts shape)", () => {
    const accounts = numberPaths(".accounts[*].balance", ".accounts[*].tokenAccounts[*].balance", ".accounts[*].tokenAccounts[*].usdValue", ".accounts[*].nfts[*].floorPrice");
    const text = `{"accounts":[{"address":"a","balance":1,"tokenAccounts":[{"balance":2,"usdValue":3},{"balance":${INEXACT},"usdValue":0.5}],"nfts":[]},{"address":"b","balance":99999999.999999999,"tokenAccounts":[],"nfts":[{"floorPrice":1},{"floorPrice":1e400}]}]}`;
    expect(foundAt(text, accounts).map(({ pattern, path }) => [pattern, path.join(".")])).toEqual([
      [1, "accounts.0.tokenAccounts.1.balance"],
      [0, "accounts.1.balance"],
      [3, "accounts.1.nfts.1.floorPrice"],
    ]);
  });

  it("reads pretty-printed JSON as well", () => {
    const text = JSON.stringify({ transactions: [{ amount: 1, fee: 2 }] }, null, 2).replace(": 2", ` :\n\t ${INEXACT}`);
    expect(foundAt(text).map(({ path }) => path)).toEqual([["transactions", 0, "fee"]]);
  });

  it("counts keys spelled with escapes, the last key or one on the way", () => {
    expect(foundAt(`{"transactions":[{"am\\u006funt":${INEXACT}}]}`).map(({ path }) => path)).toEqual([["transactions", 0, "amount"]]);
    expect(foundAt(`{"transactions":[{"\\u0066\\u0065\\u0065":${INEXACT}}]}`).map(({ path }) => path)).toEqual([["transactions", 0, "fee"]]);
    expect(foundAt(`{"tr\\u0061nsactions":[{"amount":${INEXACT}}]}`).map(({ path }) => path)).toEqual([["transactions", 0, "amount"]]);
  });

  it("does not scan a body whose escapes cannot spell a key a path ends in", () => {
    // "caf\u00e9" is 9 characters: neither fee (3, 8, 13, 18) nor amount (6, 11, …, 36) spelled with escapes.
    const text = `{"transactions":[{"caf\\u00e9":1,"memo":"A \\u0026 B","amount":1,"fee":0.000005}]}`;
    expect(mayHoldInexactNumber(Buffer.from(text), NATIVE)).toBe(false);
    // "f\u0065e" is, and goes to the full scan whatever its value.
    expect(mayHoldInexactNumber(Buffer.from(`{"transactions":[{"f\\u0065e":1}]}`), NATIVE)).toBe(true);
  });

  it("ignores look-alike text inside strings, keys and values alike", () => {
    expect(foundAt(`{"transactions":[{"memo":"{\\"amount\\":${INEXACT}}","amount":1}]}`)).toEqual([]);
    expect(foundAt(`{"transactions":[{"\\"amount\\":${INEXACT}":1,"amount":2}]}`)).toEqual([]);
    expect(foundAt(`{"transactions":[{"amount":"${INEXACT}"}]}`)).toEqual([]);
    expect(foundAt(`{"memo":"{\\"transactions\\":[{","transactions":[{"x":"}]}\\\\","fee":${INEXACT}}]}`).map(({ path }) => path)).toEqual([
      ["transactions", 0, "fee"],
    ]);
  });

  describe("a repeated key keeps its last value, as JSON.parse does", () => {
    it.each([
      ["an inexact amount repeated as an exact one", `{"transactions":[{"amount":${INEXACT},"amount":10}]}`, []],
      ["an exact amount repeated as an inexact one", `{"transactions":[{"amount":10,"amount":${INEXACT}}]}`, ["transactions.0.amount"]],
      ["an inexact fee repeated as null", `{"transactions":[{"fee":${INEXACT},"fee":null}]}`, []],
      ["transactions repeated, the inexact list first", `{"transactions":[{"amount":${INEXACT}}],"transactions":[{"amount":1}]}`, []],
      ["transactions repeated as an object", `{"transactions":[{"amount":${INEXACT}}],"transactions":{"amount":1}}`, []],
      ["transactions repeated, the inexact list last", `{"transactions":[{"amount":1}],"transactions":[{"fee":1},{"fee":${INEXACT}}]}`, ["transactions.1.fee"]],
      ["the same key spelled plainly and with an escape", `{"transactions":[{"amount":${INEXACT},"\\u0061mount":1}]}`, []],
    ] as const)("%s", (_label, text, expected) => {
      expect(foundAt(text).map(({ path }) => path.join("."))).toEqual(expected);
    });
  });

  it("finds exactly the inexact literals JSON.parse kept, in any native batch, however its keys repeat", () => {
    // 10, 100000000 and 0 only come from the inexact literals.
    const ROUNDED = new Set([10, 100_000_000, 0]);
    const literal = fc.constantFrom("1", "2.5", "0.000005", "5e-7", "123456789.12345679", INEXACT, "99999999.999999999", "1e-400");
    const key = fc.constantFrom('"amount"', '"fee"', '"\\u0061mount"', '"f\\u0065e"', '"token"');
    const value = fc.oneof(literal, fc.constantFrom('"x"', "null", "[]", `"${INEXACT}"`, `{"amount":${INEXACT}}`));
    const object = (members: fc.Arbitrary<string>) => fc.array(members, { maxLength: 4 }).map((list) => `{${list.join(",")}}`);
    const transaction = object(fc.tuple(key, value).map(([k, v]) => `${k}:${v}`));
    const transactions = fc.oneof(fc.array(transaction, { maxLength: 4 }).map((list) => `[${list.join(",")}]`), fc.constant("null"));
    const body = object(fc.oneof(transactions.map((list) => `"transactions":${list}`), fc.constant('"source":"x"')));
    fc.assert(
      fc.property(body, (text) => {
        const parsed = JSON.parse(text) as { transactions?: Array<Record<string, unknown>> | null };
        const expected = (parsed.transactions ?? []).flatMap((tx, i) =>
          Object.entries(tx).flatMap(([k, v]) => ((k === "amount" || k === "fee") && typeof v === "number" && ROUNDED.has(v) ? [`transactions.${i}.${k}`] : [])),
        );
        // As sets: with a key repeated, JSON.parse lists it where it first stood and the scan
        // where its last value stands ({"amount":"x","fee":…,"amount":…}), and both are right.
        expect(foundAt(text).map(({ path }) => path.join(".")).sort()).toEqual(expected.sort());
      }),
    );
  });

  it("judges a realistic batch of thousands by the byte search alone", () => {
    const txs = Array.from({ length: 5_000 }, (_, i) => [i % 3 === 0 ? "123456789.12345679" : ((i * 1.37) % 5000).toFixed(6), "0.000005"] as [string, string]);
    const body = Buffer.from(batch(...txs));
    expect(mayHoldInexactNumber(body, NATIVE)).toBe(false);
    const rounded = Buffer.from(batch(...txs.slice(0, 4_000), [INEXACT], ...txs.slice(4_000)));
    expect(inexactNumberLiterals(rounded, NATIVE).map(({ path }) => path.join("."))).toEqual(["transactions.4000.amount"]);
  });
});
