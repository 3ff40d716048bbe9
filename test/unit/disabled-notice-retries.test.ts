// The notice to the owner of a disabled alert has no row to hold its schedule: BullMQ's own
// attempts carry it, and the workers' backoff strategy spaces them as RETRY_SCHEDULE spaces a
// notification's attempts.
import { describe, expect, it } from "vitest";
import { parseDurationList } from "../../src/duration.ts";
import { DEFAULT_RETRY_SCHEDULE } from "../../src/config.ts";
import {
  RETRY_SCHEDULE_BACKOFF,
  disabledNoticeJobId,
  disabledNoticeJobOptions,
  retryScheduleBackoff,
} from "../../src/queue/disabled-notices.ts";

const schedule = parseDurationList(DEFAULT_RETRY_SCHEDULE);

describe("a disabled-alert notice's retries", () => {
  it("get as many attempts as a notification: the first try and one per step of the schedule", () => {
    expect(disabledNoticeJobOptions(schedule)).toEqual({ attempts: 8, backoff: { type: RETRY_SCHEDULE_BACKOFF } });
  });

  it("wait each step of the schedule in turn, with the same ±20 % jitter", () => {
    const middle = retryScheduleBackoff(schedule, () => 0.5);
    expect(schedule.map((_, i) => middle(i + 1, RETRY_SCHEDULE_BACKOFF))).toEqual(schedule);
    expect(retryScheduleBackoff(schedule, () => 0)(1, RETRY_SCHEDULE_BACKOFF)).toBe(4_000);
    expect(retryScheduleBackoff(schedule, () => 0.999_999)(1, RETRY_SCHEDULE_BACKOFF)).toBe(6_000);
  });

  it("stop once the schedule is spent, and never retry a job of another backoff type", () => {
    const backoff = retryScheduleBackoff(schedule, () => 0.5);
    expect(backoff(schedule.length + 1, RETRY_SCHEDULE_BACKOFF)).toBe(-1);
    expect(backoff(1, "something-else")).toBe(-1);
  });

  it("have one job id per disabling, which BullMQ accepts (no ':')", () => {
    const at = new Date("2026-11-27T03:00:00.000Z");
    const id = disabledNoticeJobId({ alertId: "alr_01jdqz", disabledAt: at });
    expect(id).toBe(`notice_alr_01jdqz_${at.getTime()}`);
    expect(id).not.toContain(":");
    expect(disabledNoticeJobId({ alertId: "alr_01jdqz", disabledAt: new Date(at.getTime() + 1) })).not.toBe(id);
  });
});
