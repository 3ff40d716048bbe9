// Realistic chain values for tests: random base58 addresses and signatures of the right length.
import { randomBytes } from "node:crypto";
import { base58Encode } from "../../src/domain/base58.ts";

export const randomAddress = (): string => base58Encode(randomBytes(32));
export const randomSignature = (): string => base58Encode(randomBytes(64));

/** Real mainnet mints, so fixtures read like the chain. */
export const MINTS = {
  USDC: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  BONK: "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263",
  JUP: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
} as const;
