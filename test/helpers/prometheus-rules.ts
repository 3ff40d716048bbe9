// The Prometheus alerting rules the repo ships (deploy/prometheus/), read as Prometheus reads
// them: the file as YAML, each `expr` with Prometheus's own PromQL grammar (the lezer grammar its
// web UI parses queries with), and what each selects from our metrics. And a /metrics page read
// back into the metric names, labels and values it offers, to hold the rules against.
import { readFileSync } from "node:fs";
import { parser } from "@prometheus-io/lezer-promql";
import { parse } from "yaml";

export const RULES_FILE = "deploy/prometheus/wallet-alerts.rules.yml";

export type AlertingRule = {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
};
export type RuleGroup = { name: string; rules: AlertingRule[] };

/** The rules file, parsed as YAML (not checked here: the tests check its shape). */
export function readRulesFile(): unknown {
  return parse(readFileSync(new URL(`../../${RULES_FILE}`, import.meta.url), "utf8"));
}

/** Where PromQL's grammar found no way on (error nodes); empty for an expression it parses whole. */
export function promqlErrors(expr: string): number[] {
  const at: number[] = [];
  parser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) at.push(node.from);
    },
  });
  return at;
}

export type LabelMatcher = { label: string; op: "=" | "!=" | "=~" | "!~"; value: string };
/** A vector selector: `metric{label="value", …}`. */
export type Selector = { metric: string; matchers: LabelMatcher[] };

/** Every vector selector in the expression (in a range or not), with its label matchers. */
export function selectorsIn(expr: string): Selector[] {
  const selectors: Selector[] = [];
  const text = (node: { from: number; to: number }) => expr.slice(node.from, node.to);
  parser.parse(expr).iterate({
    enter: (ref) => {
      if (ref.name !== "VectorSelector") return;
      const node = ref.node;
      const name = node.getChild("Identifier");
      const matchers: LabelMatcher[] = [];
      for (const matcher of node.getChild("LabelMatchers")?.getChildren("UnquotedLabelMatcher") ?? []) {
        const label = matcher.getChild("LabelName");
        const op = matcher.getChild("MatchOp");
        const value = matcher.getChild("StringLiteral");
        if (!label || !op || !value) continue;
        // PromQL's double-quoted strings escape as JSON's do for anything a rule here holds.
        matchers.push({ label: text(label), op: text(op) as LabelMatcher["op"], value: JSON.parse(text(value)) as string });
      }
      selectors.push({ metric: name ? text(name) : "", matchers });
    },
  });
  return selectors;
}

/**
 * The values an equality or alternation matcher asks for: `a` for `="a"`, `a`, `b` for `=~"a|b"`;
 * none for a negation or a pattern that is more than plain words.
 */
export function valuesAskedFor(matcher: LabelMatcher): string[] {
  if (matcher.op === "=") return [matcher.value];
  if (matcher.op === "=~" && /^[\w-]+(\|[\w-]+)*$/.test(matcher.value)) return matcher.value.split("|");
  return [];
}

/** What a /metrics page offers: each series name, with the values each of its labels takes. */
export type Exposition = Map<string, Map<string, Set<string>>>;

const SUFFIXES: Readonly<Record<string, readonly string[]>> = { histogram: ["_bucket", "_sum", "_count"], summary: ["", "_sum", "_count"] };

/**
 * A Prometheus text exposition read back: every family its `# TYPE` lines declare (a histogram as
 * its _bucket, _sum and _count series, as a rule selects them), with no labels until a sample
 * gives them, and the labels and values of every sample.
 */
export function readExposition(body: string): Exposition {
  const series: Exposition = new Map();
  const of = (name: string) => series.get(name) ?? series.set(name, new Map()).get(name)!;
  for (const line of body.split("\n")) {
    const declared = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (declared) {
      for (const suffix of SUFFIXES[declared[2]!] ?? [""]) of(`${declared[1]}${suffix}`);
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!sample) continue;
    const labels = of(sample[1]!);
    for (const [, label, value] of (sample[2] ?? "").matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      (labels.get(label!) ?? labels.set(label!, new Set()).get(label!)!).add(value!);
    }
  }
  return series;
}
