import { describe, expect, it } from "vitest";
import { withoutPeerAddress } from "../../src/notify/channels/peer-address.ts";

describe("withoutPeerAddress", () => {
  it.each([
    ["connect ECONNREFUSED 10.0.3.7:587", "connect ECONNREFUSED"],
    ["getaddrinfo ENOTFOUND smtp.internal", "getaddrinfo ENOTFOUND"],
    ["connect ETIMEDOUT [fd00::5]:25", "connect ETIMEDOUT"],
    ["Connection closed by 192.168.1.20:465 unexpectedly", "Connection closed by [address] unexpectedly"],
    ["Greeting never received", "Greeting never received"],
  ])("%s → %s", (message, shown) => {
    expect(withoutPeerAddress(message)).toBe(shown);
  });
});
