// Redis's answers that mean it takes no writes for now — full at maxmemory (noeviction), unable to
// persist, short of replicas, a read-only replica, busy with a long script — are outages (503,
// logged once a minute), as Redis being down is: the work may be sent again, and what PostgreSQL
// stored before is picked up by the reconciler. The words are Redis 7's own, as ioredis reports
// them, plain and from inside a script (BullMQ's commands are scripts).
import { describe, expect, it } from "vitest";
import { isUnavailableError, misconfiguredSetting } from "../../src/dependency-errors.ts";

const replyError = (message: string) => Object.assign(new Error(message), { name: "ReplyError", command: { name: "evalsha", args: [] } });
const SCRIPT = " script: ff967d0ae0e68b4f9e360fa91c54598bc25ad9b6, on @user_script:1.";

describe("a Redis that takes no writes for now", () => {
  it.each([
    ["full at maxmemory", "OOM command not allowed when used memory > 'maxmemory'."],
    ["full at maxmemory, inside a script", `OOM command not allowed when used memory > 'maxmemory'.${SCRIPT}`],
    [
      "unable to save its snapshot (stop-writes-on-bgsave-error)",
      "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.",
    ],
    ["unable to write its append-only file", "MISCONF Errors writing to the AOF file: No space left on device"],
    ["short of replicas (min-replicas-to-write)", `NOREPLICAS Not enough good replicas to write.${SCRIPT}`],
    ["a read-only replica, in an older Redis's words", "READONLY You can't write against a read only slave."],
    ["busy with a script past its time limit", "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SCRIPT KILL or SHUTDOWN NOSCRIPT."],
  ])("is unavailable when %s (503, an outage), and no setting is blamed", (_name, message) => {
    expect(isUnavailableError(replyError(message))).toBe(true);
    expect(misconfiguredSetting(replyError(message))).toBeUndefined();
  });

  it("takes Redis's BUSY for a running script only, not the BUSYGROUP and BUSYKEY answers of a request no wait makes pass", () => {
    expect(isUnavailableError(replyError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT."))).toBe(true);
    expect(isUnavailableError(replyError("BUSYGROUP Consumer Group name already exists"))).toBe(false);
    expect(isUnavailableError(replyError("BUSYKEY Target key name already exists."))).toBe(false);
  });
});
