import { describe, expect, it } from "vitest";
import { MAX_BLOCK_TIME_AHEAD_SECONDS, blockTimeAheadIssue } from "../../src/ingest/block-time.ts";

const NOW = new Date("2026-11-27T12:00:00.750Z");
const nowSeconds = Math.floor(NOW.getTime() / 1000);

describe("a block time against the server's clock", () => {
  it.each([
    { case: "a day ago", ahead: -86_400 },
    { case: "now", ahead: 0 },
    { case: "a few seconds ahead (clocks differ)", ahead: 5 },
    { case: "exactly 10 minutes ahead", ahead: MAX_BLOCK_TIME_AHEAD_SECONDS },
  ])("takes one $case", ({ ahead }) => {
    expect(blockTimeAheadIssue(nowSeconds + ahead, NOW)).toBeNull();
  });

  it.each([
    { case: "a second past 10 minutes ahead", ahead: MAX_BLOCK_TIME_AHEAD_SECONDS + 1, says: "is 601 seconds ahead" },
    { case: "59 minutes ahead", ahead: 3540, says: "is 3540 seconds ahead" },
    { case: "an hour and a half ahead", ahead: 5400, says: "is 1 hour ahead" },
    { case: "3 hours ahead", ahead: 3 * 3600 + 59, says: "is 3 hours ahead" },
    { case: "2 days ahead", ahead: 2 * 86_400 + 60, says: "is 2 days ahead" },
  ])("refuses one $case, saying how far and what the clock read", ({ ahead, says }) => {
    expect(blockTimeAheadIssue(nowSeconds + ahead, NOW)).toBe(
      `${says} of this server's clock (2026-11-27T12:00:00.000Z); at most 10 minutes ahead is taken`,
    );
  });
});
