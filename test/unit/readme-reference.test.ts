// The README's reference tables against the code they describe: a problem code or a setting
// added without its row (as limit_reached nearly was) fails here, not in a reader's hands.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROBLEM_CODES } from "../../src/http/problem.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const README = read("README.md");

/** The rows of the README table whose header row starts with `| first |`, as cells. */
function tableRows(first: string): string[][] {
  const lines = README.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`| ${first} |`));
  if (start < 0) throw new Error(`README has no table starting with "| ${first} |"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line.split("|").slice(1, -1).map((cell) => cell.trim()));
  }
  return rows;
}

describe("the README's reference tables", () => {
  it("list every problem code with its status, and no code the service does not send", () => {
    const documented = tableRows("code").map(([code, status]): [string, number] => [code!.replaceAll("`", ""), Number(status)]);
    const sent = Object.entries(PROBLEM_CODES).map(([code, { status }]): [string, number] => [code, status]);
    expect(new Map(documented)).toEqual(new Map(sent));
  });

  it("list every setting that loadConfig reads", () => {
    const settings = [...read("src/config.ts").matchAll(/\b(?:read|optional)\("([A-Z0-9_]+)"/g)].map((m) => m[1]!);
    expect(settings.length).toBeGreaterThan(20);
    const table = tableRows("variable")
      .map(([names]) => names!)
      .join(" ");
    expect(settings.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
