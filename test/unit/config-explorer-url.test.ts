// EXPLORER_TX_URL: the page each alert email links for its transaction. Solscan unless set;
// set empty, no link; anything that would make a broken or leaking link is refused at start.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

const explorerOf = (env: Record<string, string>) => loadConfig({ ...REQUIRED, ...env }).explorerTxUrl;

describe("EXPLORER_TX_URL", () => {
  it("is Solscan's transaction page when unset", () => {
    expect(explorerOf({})).toBe("https://solscan.io/tx/{signature}");
  });

  it("turns the link off when set empty (unlike the other settings, empty is not unset)", () => {
    expect(explorerOf({ EXPLORER_TX_URL: "" })).toBeUndefined();
  });

  it("takes another explorer's template as written, query string and all", () => {
    expect(explorerOf({ EXPLORER_TX_URL: "https://explorer.solana.com/tx/{signature}?cluster=devnet" })).toBe(
      "https://explorer.solana.com/tx/{signature}?cluster=devnet",
    );
    expect(explorerOf({ EXPLORER_TX_URL: "http://explorer.internal:8080/tx/{signature}" })).toBe("http://explorer.internal:8080/tx/{signature}");
  });

  it("refuses a template without {signature}, or with another placeholder, naming the setting", () => {
    expect(problemsOf({ EXPLORER_TX_URL: "https://solscan.io/tx/" })).toContain(
      "EXPLORER_TX_URL: expected a URL with {signature} where the transaction's signature goes, such as https://solscan.io/tx/{signature}",
    );
    expect(problemsOf({ EXPLORER_TX_URL: "https://solscan.io/{cluster}/tx/{signature}" })).toContain(
      "EXPLORER_TX_URL: expected no placeholder but {signature}",
    );
  });

  it("refuses what is not an http(s) URL, and a user or password that every email would carry", () => {
    expect(problemsOf({ EXPLORER_TX_URL: "solscan.io/tx/{signature}" })).toContain("EXPLORER_TX_URL: expected a URL, such as");
    expect(problemsOf({ EXPLORER_TX_URL: "javascript:alert('{signature}')" })).toContain("EXPLORER_TX_URL: expected an https or http URL");
    expect(problemsOf({ EXPLORER_TX_URL: "https://me:pw@explorer.example/tx/{signature}" })).toContain(
      "EXPLORER_TX_URL: expected a URL without a user or password",
    );
  });
});
