// What a process makes of PostgreSQL's autovacuum settings (src/db/autovacuum.ts): autovacuum
// runs only with both `autovacuum` and `track_counts` on, and the operator's line names the
// setting that is off, what it costs and what to do. The wiring (the start's line, the API's
// gauge) against the real server: test/integration/autovacuum-warning.test.ts.
import { describe, expect, it } from "vitest";
import { autovacuumBlockers, autovacuumWarning } from "../../src/db/autovacuum.ts";

describe("the autovacuum settings judged", () => {
  it("finds nothing to say when autovacuum and track_counts are both on", () => {
    expect(autovacuumBlockers({ autovacuum: "on", trackCounts: "on" })).toEqual([]);
    expect(autovacuumWarning({ autovacuum: "on", trackCounts: "on" })).toBeUndefined();
  });

  it("names autovacuum = off, the unbounded growth it costs and the setting to turn on", () => {
    expect(autovacuumBlockers({ autovacuum: "off", trackCounts: "on" })).toEqual(["autovacuum"]);
    const warning = autovacuumWarning({ autovacuum: "off", trackCounts: "on" });
    expect(warning).toMatch(/^PostgreSQL runs with autovacuum = off: /);
    expect(warning).toContain("grows without bound");
    expect(warning).toContain("set autovacuum = on in postgresql.conf");
    expect(warning).not.toContain("track_counts");
  });

  it("takes track_counts = off for autovacuum off too, since autovacuum finds no table to clean without its counts", () => {
    expect(autovacuumBlockers({ autovacuum: "on", trackCounts: "off" })).toEqual(["track_counts"]);
    const warning = autovacuumWarning({ autovacuum: "on", trackCounts: "off" });
    expect(warning).toMatch(/^PostgreSQL runs with track_counts = off \(autovacuum finds no table to clean/);
    expect(warning).toContain("set track_counts = on");
    expect(warning).toContain("RESET it wherever ALTER DATABASE or ALTER ROLE set it off");
  });

  it("names both when both are off", () => {
    expect(autovacuumBlockers({ autovacuum: "off", trackCounts: "off" })).toEqual(["autovacuum", "track_counts"]);
    const warning = autovacuumWarning({ autovacuum: "off", trackCounts: "off" });
    expect(warning).toMatch(/^PostgreSQL runs with autovacuum = off and track_counts = off: /);
    expect(warning).toContain("set autovacuum = on");
    expect(warning).toContain("set track_counts = on");
  });
});
