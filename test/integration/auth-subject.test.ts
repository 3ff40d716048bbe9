// The token's `sub` names the owner of every wallet and alert, so it must be something an owner
// column can hold, and hold as given: at most 255 characters (OpenID Connect's bound), no
// control characters, no lone surrogates. Any other is refused at authentication, as a bad
// token: 401 invalid_token, before anything is read or written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SUBJECT_LENGTH } from "../../src/http/auth.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { problem } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("auth-subject");
});
afterAll(async () => {
  await t.close();
});

const createWallet = async (sub: string) =>
  t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(await t.token(sub)), payload: { address: randomAddress() } });

const listWallets = async (sub: string) => t.app.inject({ url: "/v1/wallets", headers: bearer(await t.token(sub)) });

function expectRefusedSubject(res: Awaited<ReturnType<typeof createWallet>>, reason: string): void {
  const body = problem(res, 401, "unauthorized");
  expect(body.detail).toContain(reason);
  expect(res.headers["www-authenticate"]).toContain('error="invalid_token"');
}

describe("the token's subject", () => {
  it("refuses a 6,000-character subject with 401 invalid_token (it made a wallet create a 500)", async () => {
    expectRefusedSubject(await createWallet("s".repeat(6_000)), `longer than ${MAX_SUBJECT_LENGTH} characters`);
  });

  it(`accepts ${MAX_SUBJECT_LENGTH} characters, even of four UTF-8 bytes each, and refuses one more`, async () => {
    const longest = "𝒜".repeat(MAX_SUBJECT_LENGTH);
    expect((await createWallet(longest)).statusCode).toBe(201);
    expect((await listWallets(longest)).json()).toMatchObject({ total: 1 });
    expectRefusedSubject(await createWallet("a".repeat(MAX_SUBJECT_LENGTH + 1)), `longer than ${MAX_SUBJECT_LENGTH} characters`);
  });

  it.each([
    ["a lone high surrogate", "victim\ud800"],
    ["a lone low surrogate", "victim\udfff"],
  ])("refuses a subject with %s, which would be stored as U+FFFD and share that owner", async (_what, sub) => {
    expectRefusedSubject(await createWallet(sub), "lone surrogate");
  });

  it("does not let a lone-surrogate subject read the wallets of the owner whose subject really has U+FFFD", async () => {
    expect((await createWallet("victim\ufffd")).statusCode).toBe(201);
    expect((await listWallets("victim\ufffd")).json()).toMatchObject({ total: 1 });
    expectRefusedSubject(await listWallets("victim\ud800"), "lone surrogate");
  });

  it.each([
    ["NUL", "alice\u0000"],
    ["a line feed", "alice\nbob"],
    ["a C1 control", "alice\u0085"],
  ])("refuses a subject with %s as a bad token, not as the request's 400", async (_what, sub) => {
    expectRefusedSubject(await listWallets(sub), "control character");
  });

  it("still accepts an ordinary subject with spaces, punctuation and accents", async () => {
    expect((await createWallet("auth0|Zoë Müller <zoe@example.com>")).statusCode).toBe(201);
  });
});
