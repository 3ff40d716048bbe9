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

// EXPLORER_ADDRESS_URL: the pages each alert email links for its wallet and its counterparty,
// checked as EXPLORER_TX_URL is.
const addressPageOf = (env: Record<string, string>) => loadConfig({ ...REQUIRED, ...env }).explorerAddressUrl;

describe("EXPLORER_ADDRESS_URL", () => {
  it("is Solscan's account page when unset, and off when set empty", () => {
    expect(addressPageOf({})).toBe("https://solscan.io/account/{address}");
    expect(addressPageOf({ EXPLORER_ADDRESS_URL: "" })).toBeUndefined();
    expect(addressPageOf({ EXPLORER_ADDRESS_URL: "https://explorer.solana.com/address/{address}?cluster=devnet" })).toBe(
      "https://explorer.solana.com/address/{address}?cluster=devnet",
    );
  });

  it("refuses a template without {address} or with another placeholder, what is not an http(s) URL, and a user or password", () => {
    expect(problemsOf({ EXPLORER_ADDRESS_URL: "https://solscan.io/account/" })).toContain(
      "EXPLORER_ADDRESS_URL: expected a URL with {address} where the account's address goes, such as https://solscan.io/account/{address}",
    );
    expect(problemsOf({ EXPLORER_ADDRESS_URL: "https://solscan.io/account/{signature}" })).toContain("EXPLORER_ADDRESS_URL: expected a URL with {address}");
    expect(problemsOf({ EXPLORER_ADDRESS_URL: "https://solscan.io/{cluster}/account/{address}" })).toContain("EXPLORER_ADDRESS_URL: expected no placeholder but {address}");
    expect(problemsOf({ EXPLORER_ADDRESS_URL: "javascript:alert('{address}')" })).toContain("EXPLORER_ADDRESS_URL: expected an https or http URL");
    expect(problemsOf({ EXPLORER_ADDRESS_URL: "https://me:pw@explorer.example/account/{address}" })).toContain(
      "EXPLORER_ADDRESS_URL: expected a URL without a user or password",
    );
    expect(problemsOf({ EXPLORER_ADDRESS_URL: "https://explorer.example/account/{address}?q=%zz" })).toContain("EXPLORER_ADDRESS_URL: the ");
  });
});
