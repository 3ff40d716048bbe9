// Where the CPU went during a benchmark phase, read from /proc (Linux): seconds of CPU per
// component, and the machine's busy share. Postgres is every process named "postgres"; Redis
// every "redis-server" (both run on this machine in the benchmark setup).
import { readFileSync, readdirSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far; 0 once it is gone. */
export function processCpu(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0; // gone meanwhile
  }
}

/** The processes whose command name is `name`. */
export function pidsNamed(name: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name;
      } catch {
        return false;
      }
    });
}

/** Machine-wide busy and total CPU seconds so far (all cores). */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

export type CpuSample = Record<string, number> & { machineBusy: number; machineTotal: number };

export function sampleCpu(workerPids: readonly number[]): CpuSample {
  const sum = (pids: readonly number[]) => pids.reduce((total, pid) => total + processCpu(pid), 0);
  const machine = machineCpu();
  return {
    ingest: sum([process.pid]),
    workers: sum(workerPids),
    postgres: sum(pidsNamed("postgres")),
    redis: sum(pidsNamed("redis-server")),
    machineBusy: machine.busy,
    machineTotal: machine.total,
  };
}

/** CPU seconds per component between two samples, and the machine's busy share (0–1). */
export function cpuBetween(before: CpuSample, after: CpuSample) {
  const delta = (key: string) => Math.round(((after[key] ?? 0) - (before[key] ?? 0)) * 100) / 100;
  const busy = delta("machineBusy");
  const total = delta("machineTotal");
  return {
    seconds: { ingest: delta("ingest"), workers: delta("workers"), postgres: delta("postgres"), redis: delta("redis") },
    machineBusyShare: total > 0 ? Math.round((busy / total) * 100) / 100 : 0,
    otherProcessesSeconds: Math.round((busy - delta("ingest") - delta("workers") - delta("postgres") - delta("redis")) * 100) / 100,
  };
}

/** Resident set size of a process in MB (VmRSS). */
export function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}
