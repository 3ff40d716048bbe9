// Durations as operators write them in the environment: "500ms", "5s", "5m", "2h".
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

export function parseDuration(raw: string): number {
  const match = /^(\d+)(ms|s|m|h)$/.exec(raw.trim());
  if (!match) throw new Error(`"${raw}" is not a duration such as 500ms, 5s, 5m or 2h`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

export function parseDurationList(raw: string): number[] {
  const items = raw.split(",").map((item) => item.trim());
  if (items.length === 0 || items.some((item) => item === ""))
    throw new Error("expected a comma list of durations such as 5s,5m,30m");
  return items.map(parseDuration);
}
