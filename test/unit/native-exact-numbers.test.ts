// How native ingest refuses a batch holding a number a double rounds (assertExactNumbers): one
// 400 naming each path under body, as every other problem of a native batch is named.
import { describe, expect, it } from "vitest";
import { ProblemError } from "../../src/http/problem.ts";
import { ACCOUNT_NUMBERS, MAX_INEXACT_NUMBER_ERRORS, TRANSACTION_NUMBERS, assertExactNumbers } from "../../src/ingest/native.ts";

const MESSAGE = "has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount";
const INEXACT = "9.99999999999999999";

const transactions = (amounts: string[]) =>
  Buffer.from(`{"transactions":[${amounts.map((amount) => `{"amount":${amount},"fee":0.000005}`).join(",")}]}`);

function refusal(body: Buffer, paths = TRANSACTION_NUMBERS): ProblemError {
  try {
    assertExactNumbers(body, paths);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error("the body was not refused");
}

describe("assertExactNumbers", () => {
  it("lets a batch of exact numbers through", () => {
    expect(() => assertExactNumbers(transactions(["1.5", "123456789.12345679", "1e-7"]), TRANSACTION_NUMBERS)).not.toThrow();
  });

  it("refuses a batch with a 400 naming body.transactions.N.amount, with the Helius path's message", () => {
    const error = refusal(transactions(["1", "2", "3", INEXACT]));
    expect(error.status).toBe(400);
    expect(error.code).toBe("validation_failed");
    expect(error.errors).toEqual([{ path: "body.transactions.3.amount", message: MESSAGE }]);
    expect(error.message).toBe(`body.transactions.3.amount ${MESSAGE}`);
  });

  it("names the paths of account snapshots", () => {
    const body = Buffer.from(`{"accounts":[{"balance":1,"tokenAccounts":[{"balance":1,"usdValue":${INEXACT}}],"nfts":[]}]}`);
    expect(refusal(body, ACCOUNT_NUMBERS).errors).toEqual([{ path: "body.accounts.0.tokenAccounts.0.usdValue", message: MESSAGE }]);
  });

  it(`names the first ${MAX_INEXACT_NUMBER_ERRORS} of more, and says how many more there are`, () => {
    const error = refusal(transactions(Array.from({ length: MAX_INEXACT_NUMBER_ERRORS + 5 }, () => INEXACT)));
    expect(error.errors).toHaveLength(MAX_INEXACT_NUMBER_ERRORS);
    expect(error.errors?.at(-1)?.path).toBe(`body.transactions.${MAX_INEXACT_NUMBER_ERRORS - 1}.amount`);
    expect(error.message).toMatch(/; and 5 more such numbers$/);
  });
});
