// npm run bench — every benchmark, one after another (never two at once: they would share
// the two cores), then one JSON report (bench/results/report.json) and one short table.
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { RESULTS_DIR, formatTable, machine, type Row } from "./lib/report.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BENCHMARKS = ["pipeline", "delivery", "api", "latency"] as const;

function run(name: string): Promise<{ code: number | null; output: string }> {
  console.error(`\n== bench:${name}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", `bench/${name}.ts`], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      process.stderr.write(chunk);
    });
    child.on("exit", (code) => resolve({ code, output }));
  });
}

/** The first top-level JSON document a benchmark printed (they print it before their table). */
function firstDocument(output: string): Record<string, unknown> | undefined {
  const start = output.search(/^\{$/m);
  const end = output.search(/^\}$/m);
  if (start < 0 || end < start) return undefined;
  return JSON.parse(output.slice(start, end + 1)) as Record<string, unknown>;
}

const results: Record<string, unknown> = {};
const rows: Row[] = [];
for (const name of BENCHMARKS) {
  const { code, output } = await run(name);
  const document = firstDocument(output) ?? (await readFile(`${RESULTS_DIR}${name}.json`, "utf8").then(JSON.parse, () => undefined));
  results[name] = code === 0 && document ? document : { failed: true, exitCode: code };
  const table = (document as { table?: Row[] } | undefined)?.table;
  if (table) rows.push(...table.map((row) => ({ ...row, measure: `${name}: ${row.measure}` })));
  else if (code === 0 && document) rows.push({ measure: `${name}: see bench/results/report.json`, value: 0, unit: "" });
  else rows.push({ measure: `${name}: FAILED (exit ${code})`, value: 0, unit: "" });
}

const report = { at: new Date().toISOString(), machine: machine(), results };
await writeFile(`${RESULTS_DIR}report.json`, `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report, null, 2));
console.log(`\n${formatTable(rows)}\n\nfull report: bench/results/report.json`);
