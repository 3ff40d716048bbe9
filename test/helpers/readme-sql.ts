// The README's SQL as an operator copies it: a ```sql block, found by the words its first line
// starts with (`-- Prune:`), inside one section, so that a test runs what the README says.
import { readFileSync } from "node:fs";

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

/** The README's section under `heading` (its whole line, "### Retention"), up to the next heading of its level or higher. */
export function readmeSection(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`the README has no heading "${heading}"`);
  const level = heading.match(/^#+/)![0].length;
  const rest = README.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`^#{1,${level}} `, "m"));
  return next < 0 ? rest : rest.slice(0, next);
}

/** The ```sql block of the README's section `heading` whose first line starts with `-- <start>` ("Prune:"). */
export function readmeSqlBlock(heading: string, start: string): string {
  const block = [...readmeSection(heading).matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1]!).find((sql) => sql.startsWith(`-- ${start}`));
  if (block === undefined) throw new Error(`the README's "${heading}" has no sql block starting "-- ${start}"`);
  return block;
}
