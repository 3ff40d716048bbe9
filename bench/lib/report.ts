// Shared shape of every benchmark's output: one JSON document (figures, ratios, machine)
// written to bench/results/<name>.json and printed, plus a short human table.
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import { fileURLToPath } from "node:url";

export type Row = { measure: string; value: number; unit: string; target?: string; ratio?: number };

export const RESULTS_DIR = fileURLToPath(new URL("../results/", import.meta.url));

export function machine() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

export async function writeReport(name: string, report: Record<string, unknown>, rows: Row[]): Promise<void> {
  const document = { benchmark: name, at: new Date().toISOString(), machine: machine(), ...report, table: rows };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(`${RESULTS_DIR}${name}.json`, `${JSON.stringify(document, null, 2)}\n`);
  console.log(JSON.stringify(document, null, 2));
  console.log(formatTable(rows));
}

export function formatTable(rows: Row[]): string {
  const cells = rows.map((row) => [
    row.measure,
    `${formatNumber(row.value)} ${row.unit}`,
    row.target ?? "",
    row.ratio === undefined ? "" : `${row.ratio.toFixed(2)}×`,
  ]);
  const header = ["measure", "value", "target", "ratio"];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((cell, i) => cell.padEnd(widths[i]!)).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...cells.map(line)].join("\n");
}

const formatNumber = (value: number) =>
  value >= 100 ? Math.round(value).toLocaleString("en-US") : String(Math.round(value * 100) / 100);
