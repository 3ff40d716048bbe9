// The alerting rules the repo ships (deploy/prometheus/wallet-alerts.rules.yml, README
// Monitoring) are a file Prometheus loads: YAML in its `groups:` form, every rule with a severity
// that says whether it wakes someone and a summary, every `expr` parsed by PromQL's grammar.
// Whether each metric they select is one the service serves: prometheus-rules-metrics.test.ts.
import { describe, expect, it } from "vitest";
import { promqlErrors, readRulesFile, selectorsIn, valuesAskedFor, type AlertingRule, type RuleGroup } from "../helpers/prometheus-rules.ts";

const SEVERITIES = ["page", "ticket"];

function groups(): RuleGroup[] {
  const file = readRulesFile() as { groups?: unknown };
  expect(Object.keys(file)).toEqual(["groups"]);
  expect(Array.isArray(file.groups)).toBe(true);
  return file.groups as RuleGroup[];
}
const rules = () => groups().flatMap((group) => group.rules);

describe("the Prometheus rules file", () => {
  it("is YAML in Prometheus's groups form: named groups of alerting rules with an expr, a severity and a summary", () => {
    for (const group of groups()) {
      expect(Object.keys(group).sort()).toEqual(["name", "rules"]);
      expect(group.name).toMatch(/\S/);
      expect(group.rules.length).toBeGreaterThan(0);
      for (const rule of group.rules) {
        expect(Object.keys(rule).filter((key) => !["alert", "expr", "for", "labels", "annotations"].includes(key)), rule.alert).toEqual([]);
        expect(rule.alert).toMatch(/^WalletAlerts[A-Za-z]+$/);
        expect(typeof rule.expr, rule.alert).toBe("string");
        if (rule.for !== undefined) expect(rule.for, rule.alert).toMatch(/^\d+[smhd]$/);
        expect(SEVERITIES, rule.alert).toContain(rule.labels?.severity);
        expect(rule.annotations?.summary, rule.alert).toMatch(/\S/);
      }
    }
    const names = rules().map((rule) => rule.alert);
    expect(new Set(names).size).toBe(names.length);
  });

  it("has every expr parsed whole by PromQL's grammar", () => {
    for (const rule of rules()) expect(promqlErrors(rule.expr), `${rule.alert}: ${rule.expr}`).toEqual([]);
  });

  it("selects only metrics of ours, each by its name", () => {
    for (const rule of rules()) {
      const selectors = selectorsIn(rule.expr);
      expect(selectors.length, rule.alert).toBeGreaterThan(0);
      for (const { metric } of selectors) expect(metric, rule.alert).toMatch(/^wallet_alerts_\w+$/);
    }
  });

  it("pages on the give-ups of the operator's causes, and only tickets the destination's and the SMS and email budgets'", () => {
    const byName = new Map(rules().map((rule) => [rule.alert, rule]));
    const causes = (alert: string) => {
      const rule = byName.get(alert)!;
      const matchers = selectorsIn(rule.expr).flatMap((selector) => selector.matchers.filter((matcher) => matcher.label === "cause"));
      return { severity: rule.labels?.severity, causes: matchers.flatMap(valuesAskedFor).sort() };
    };
    expect(causes("WalletAlertsDeliveriesGivenUp")).toEqual({ severity: "page", causes: ["deployment", "provider"] });
    expect(causes("WalletAlertsDestinationsGivingUp")).toEqual({ severity: "ticket", causes: ["destination"] });
    expect(causes("WalletAlertsSmsBudgetSpent")).toEqual({ severity: "ticket", causes: ["sms_budget"] });
    expect(causes("WalletAlertsEmailBudgetSpent")).toEqual({ severity: "ticket", causes: ["email_budget"] });
  });
});

describe("the rules on the retrying backlog and on PostgreSQL's autovacuum", () => {
  const byName = () => new Map(rules().map((rule) => [rule.alert, rule]));
  /** The channels a rule's selectors of retrying notifications ask for (none named: every channel, as ["*"]). */
  const retryingChannels = (rule: AlertingRule) =>
    selectorsIn(rule.expr)
      .filter((selector) => selector.metric === "wallet_alerts_notifications")
      .filter((selector) => selector.matchers.some((matcher) => matcher.label === "status" && valuesAskedFor(matcher).includes("retrying")))
      .flatMap((selector) => {
        const channels = selector.matchers.filter((matcher) => matcher.label === "channel").flatMap(valuesAskedFor);
        return channels.length > 0 ? channels : ["*"];
      })
      .sort();
  const metricsOf = (rule: AlertingRule) => selectorsIn(rule.expr).map((selector) => selector.metric).sort();

  it("pages on no webhook backlog, which one customer's receiver that is down fills alone; email and SMS backlogs still page", () => {
    for (const rule of rules().filter((candidate) => candidate.labels?.severity === "page")) {
      expect(retryingChannels(rule), rule.alert).not.toContain("webhook");
      expect(retryingChannels(rule), rule.alert).not.toContain("*");
    }
    const backlog = byName().get("WalletAlertsDeliveryBacklog")!;
    expect({ severity: backlog.labels?.severity, channels: retryingChannels(backlog) }).toEqual({ severity: "page", channels: ["email", "sms"] });
  });

  it("pages for webhooks when 3 or more receivers have notifications retrying, and tickets a webhook backlog from fewer", () => {
    const failing = byName().get("WalletAlertsWebhookReceiversFailing")!;
    expect(failing.labels?.severity).toBe("page");
    expect(failing.expr).toMatch(/^max\(wallet_alerts_webhook_receivers_retrying\) >= 3$/);
    const backlog = byName().get("WalletAlertsWebhookBacklog")!;
    expect(backlog.labels?.severity).toBe("ticket");
    expect(retryingChannels(backlog)).toEqual(["webhook"]);
    expect(metricsOf(backlog)).toEqual(["wallet_alerts_notifications", "wallet_alerts_webhook_receivers_retrying"]);
    expect(backlog.expr).toMatch(/\(max\(wallet_alerts_webhook_receivers_retrying\) < 3\)$/);
  });

  it("tickets a PostgreSQL whose autovacuum does not run", () => {
    const rule = byName().get("WalletAlertsPostgresAutovacuumOff")!;
    expect(rule.labels?.severity).toBe("ticket");
    expect(metricsOf(rule)).toEqual(["wallet_alerts_postgres_autovacuum_off"]);
  });
});

describe("the rule on a process's clock", () => {
  it("tickets a process whose clock has been more than 1 s from PostgreSQL's for 10 minutes, either way, per process", () => {
    const rule = rules().find((candidate) => candidate.alert === "WalletAlertsClockOff")!;
    expect(rule.labels?.severity).toBe("ticket");
    expect(rule.for).toBe("10m");
    // abs(): behind counts as ahead does; no max or sum: each process's offset is its own.
    expect(rule.expr).toBe("abs(wallet_alerts_clock_offset_seconds) > 1");
  });
});

describe("the PromQL reading the rules are checked with", () => {
  it("finds where an expression breaks off", () => {
    expect(promqlErrors("sum by (channel (increase(wallet_alerts_x_total[5m]))")).not.toEqual([]);
    expect(promqlErrors('wallet_alerts_x{cause="a"')).not.toEqual([]);
    expect(promqlErrors("rate(wallet_alerts_x_total[5m]")).not.toEqual([]);
    expect(promqlErrors("max(wallet_alerts_x) wallet_alerts_y")).not.toEqual([]);
  });

  it("reads each selector's metric and matchers, in a range, a function or an aggregation", () => {
    expect(selectorsIn('sum by (channel) (increase(wallet_alerts_a_total{cause=~"x|y", channel!="sms"}[15m])) > 0 or absent(wallet_alerts_b)')).toEqual([
      {
        metric: "wallet_alerts_a_total",
        matchers: [
          { label: "cause", op: "=~", value: "x|y" },
          { label: "channel", op: "!=", value: "sms" },
        ],
      },
      { metric: "wallet_alerts_b", matchers: [] },
    ]);
    expect(valuesAskedFor({ label: "cause", op: "=~", value: "x|y" })).toEqual(["x", "y"]);
    expect(valuesAskedFor({ label: "cause", op: "=~", value: "x.*" })).toEqual([]);
  });
});
