// Migration 0018 keys risk_labels by (address, source): every label stored before it survives,
// one loaded without a source included (stored as '' and answered as null), and a second list's
// label of the same address can then be stored beside it.
import { describe, expect, it } from "vitest";
import { findLabels, upsertLabels } from "../../src/db/queries/risk-labels.ts";
import { fromDatabaseMigratedUpTo } from "../helpers/migrated-up-to.ts";

/** The journal index of the migration before 0018_labels-per-source. */
const BEFORE_LABELS_PER_SOURCE = 17;

describe("labels per address and source (0018)", () => {
  it("keeps every existing label, one without a source readable as source null, and takes a second list's label beside it", async () => {
    await fromDatabaseMigratedUpTo(BEFORE_LABELS_PER_SOURCE, async (old, upgrade) => {
      await old`
        insert into risk_labels (address, category, score, source, updated_at)
        values ('unsourced', 'sanctioned', 100, null, '2026-01-02T03:04:05Z'), ('sourced', 'mixer', 80, 'vendor-x', now())`;
      await upgrade();

      const rows = await old`select address, category, score, source, updated_by as "updatedBy" from risk_labels order by address`;
      expect(rows).toEqual([
        { address: "sourced", category: "mixer", score: 80, source: "vendor-x", updatedBy: null },
        { address: "unsourced", category: "sanctioned", score: 100, source: "", updatedBy: null },
      ]);
      const label = { category: "sanctioned", score: 100, source: null, updatedAt: "2026-01-02T03:04:05.000Z" };
      expect(await findLabels(old, "unsourced")).toEqual({ address: "unsourced", ...label, labels: [label] });

      // Keyed by (address, source) now: another list's label of the address is a row of its own,
      // and the same source (none), loaded again as it was, leaves the migrated row as it is.
      const changed = await old.begin((tx) =>
        upsertLabels(
          tx,
          [
            { address: "unsourced", category: "mixer", score: 90, source: "vendor-x" },
            { address: "unsourced", category: "sanctioned", score: 100, source: null },
          ],
          "loader",
        ),
      );
      expect(changed).toEqual([{ address: "unsourced", source: "vendor-x", previous: null, label: { category: "mixer", score: 90 } }]);
      const after = await old`select source, category, updated_by as "updatedBy" from risk_labels where address = 'unsourced' order by source`;
      expect(after).toEqual([
        { source: "", category: "sanctioned", updatedBy: null },
        { source: "vendor-x", category: "mixer", updatedBy: "loader" },
      ]);
      const [key] = await old<{ columns: string }[]>`
        select string_agg(a.attname, ',' order by k.ord) as columns
        from pg_constraint c cross join unnest(c.conkey) with ordinality as k(attnum, ord)
        join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
        where c.conrelid = 'risk_labels'::regclass and c.contype = 'p'`;
      expect(key!.columns).toBe("address,source");
      await expect(old`insert into risk_labels (address, category, score, source) values ('x', 'scam', 50, null)`).rejects.toThrow(/null value/);
    }, { nextTag: "0018_labels-per-source", connections: 2 });
  });
});
