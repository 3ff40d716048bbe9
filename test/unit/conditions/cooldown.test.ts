import { describe, expect, it } from "vitest";
import { isSuppressedByCooldown } from "../../../src/domain/conditions/index.ts";

const NOW = new Date("2025-01-01T12:00:00.000Z");
const ago = (ms: number) => new Date(NOW.getTime() - ms);

describe("isSuppressedByCooldown", () => {
  it.each([
    { last: null, cooldown: 300, suppressed: false, case: "never notified" },
    { last: ago(1_000), cooldown: 0, suppressed: false, case: "a cooldown of 0, even right after a notification" },
    { last: ago(0), cooldown: 0, suppressed: false, case: "a cooldown of 0 at the same instant" },
    { last: ago(299_999), cooldown: 300, suppressed: true, case: "1 ms before the cooldown ends" },
    { last: ago(1_000), cooldown: 300, suppressed: true, case: "well inside the cooldown" },
    { last: ago(300_000), cooldown: 300, suppressed: false, case: "exactly at the cooldown" },
    { last: ago(300_001), cooldown: 300, suppressed: false, case: "just after the cooldown" },
    { last: ago(-5_000), cooldown: 300, suppressed: true, case: "a last notification in the future (clock skew)" },
  ])("$case → suppressed: $suppressed", ({ last, cooldown, suppressed }) => {
    expect(isSuppressedByCooldown(last, cooldown, NOW)).toBe(suppressed);
  });
});
