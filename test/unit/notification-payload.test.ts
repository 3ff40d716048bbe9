// A firing's payload carries what its reason says as fields (README, Notifications): the wallet's
// side (`direction`), the other side with its risk and every label with its source
// (`counterparty`), unusual_activity's counts (`activity`) and risk_score_increase's baseline
// (`previousScore`), each only where it applies. Before, a SOAR playbook that branches on
// "sanctioned" had to parse the English reason, and the label's source ("OFAC SDN") reached no
// channel at all. The email shows the counterparty's labels with their sources.
import { describe, expect, it } from "vitest";
import type { ActiveAlertRow } from "../../src/db/queries/pipeline.ts";
import {
  evaluateLargeTransfer,
  evaluateRiskScoreIncrease,
  evaluateSuspiciousCounterparty,
  evaluateUnusualActivity,
  type CounterpartyRisk,
  type Firing,
} from "../../src/domain/conditions/index.ts";
import type { Condition } from "../../src/domain/types.ts";
import { renderEmail } from "../../src/notify/render.ts";
import { triggeredPayload } from "../../src/pipeline/notification.ts";
import { OTHER, THIRD, WALLET, counterparty, tx } from "./conditions/fixtures.ts";

const NOW = new Date("2026-11-28T08:00:00.000Z");
const IDS = { notificationId: "ntf_01jz0000000000000000000000", eventId: "evt_01jz0000000000000000000000" };
const RISK = { score: 40, factors: ["sanctioned_counterparty" as const] };

function alert(condition: Condition, threshold: number, baselineScore: number | null = null): ActiveAlertRow {
  return {
    alertId: "alr_01jz0000000000000000000000",
    walletId: "wal_01jz0000000000000000000000",
    address: WALLET,
    condition,
    threshold,
    token: null,
    baselineScore,
    alias: "Desk wallet",
    channel: "webhook",
    webhookUrl: "https://hooks.example.com/risk",
    recipient: null,
  };
}

const OFAC: CounterpartyRisk = counterparty({
  labelScore: 100,
  labelCategory: "sanctioned",
  riskScore: null,
  labels: [
    { category: "sanctioned", score: 100, source: "OFAC SDN" },
    { category: "mixer", score: 90, source: "vendor-x" },
  ],
});

/** The firing as the pipeline hands it on: with the other side the evaluation looked up (transaction-firings.ts). */
const seen = (firing: Firing | null, other: CounterpartyRisk): Firing => ({ ...firing!, facts: { ...firing!.facts, counterparty: other } });

describe("triggeredPayload: what the reason says, as fields", () => {
  const sent = tx({ amount: 12.5, token: "SOL", mint: null, from: WALLET, to: OTHER });
  const received = tx({ from: OTHER, to: WALLET });

  it.each([
    {
      case: "suspicious_counterparty, sent to an OFAC-listed address: the labels with their sources, the effective one first",
      condition: "suspicious_counterparty" as const,
      firing: () => evaluateSuspiciousCounterparty(alert("suspicious_counterparty", 75), sent, OFAC),
      transaction: sent,
      fields: {
        direction: "sent",
        counterparty: {
          address: OTHER,
          risk: 100,
          labels: [
            { category: "sanctioned", score: 100, source: "OFAC SDN" },
            { category: "mixer", score: 90, source: "vendor-x" },
          ],
        },
      },
    },
    {
      case: "suspicious_counterparty, received from a tracked address risky by its own score: no labels, its score the risk",
      condition: "suspicious_counterparty" as const,
      firing: () => evaluateSuspiciousCounterparty(alert("suspicious_counterparty", 75), received, counterparty({ riskScore: 90, labels: [] })),
      transaction: received,
      fields: { direction: "received", counterparty: { address: OTHER, risk: 90, labels: [] } },
    },
    {
      case: "large_transfer to an address nobody labelled or tracks: its risk unknown (null)",
      condition: "large_transfer" as const,
      firing: () => seen(evaluateLargeTransfer(alert("large_transfer", 1_000), received), counterparty({ labels: [] })),
      transaction: received,
      fields: { direction: "received", counterparty: { address: OTHER, risk: null, labels: [] } },
    },
    {
      case: "large_transfer to an OFAC-listed address, which its own condition does not judge",
      condition: "large_transfer" as const,
      firing: () => seen(evaluateLargeTransfer(alert("large_transfer", 10), sent), OFAC),
      transaction: sent,
      fields: { direction: "sent", counterparty: { address: OTHER, risk: 100 } },
    },
    {
      case: "unusual_activity: the hour's count and the baseline it was held to",
      condition: "unusual_activity" as const,
      firing: () => seen(evaluateUnusualActivity(alert("unusual_activity", 5), sent, { countBefore: 49, countAfter: 50, previous7DaysCount: 1680 }), counterparty({ labels: [] })),
      transaction: sent,
      fields: { direction: "sent", counterparty: { address: OTHER, risk: null, labels: [] }, activity: { count: 50, baselinePerHour: 10 } },
    },
    {
      case: "unusual_activity on a self-transfer: no side, no counterparty",
      condition: "unusual_activity" as const,
      firing: () => evaluateUnusualActivity(alert("unusual_activity", 5), tx({ from: WALLET, to: WALLET }), { countBefore: 4, countAfter: 5, previous7DaysCount: 0 }),
      transaction: tx({ from: WALLET, to: WALLET }),
      fields: { activity: { count: 5, baselinePerHour: 1 } },
    },
    {
      case: "risk_score_increase: the baseline it rose from, not the change's previous score",
      condition: "risk_score_increase" as const,
      firing: () => evaluateRiskScoreIncrease(alert("risk_score_increase", 10, 20), { id: 7, address: WALLET, previousScore: 26, score: 40, factors: ["sanctioned_counterparty"] }),
      transaction: undefined,
      fields: { previousScore: 20 },
    },
  ])("$case", ({ condition, firing, transaction, fields }) => {
    const made = firing();
    expect(made).not.toBeNull();
    const { data } = triggeredPayload(alert(condition, 0), made!, RISK, transaction, NOW, IDS);
    expect(data).toMatchObject(fields);
    // Only the fields that apply: none of the others, not even as undefined or null.
    const facts = ["direction", "counterparty", "activity", "previousScore"];
    expect(Object.keys(data).filter((key) => facts.includes(key)).sort()).toEqual(Object.keys(fields).sort());
  });

  it("names its notification and its event, which the webhook-id header alone named, for a receiver that keeps only the body", () => {
    const { data } = triggeredPayload(alert("large_transfer", 1_000), evaluateLargeTransfer(alert("large_transfer", 1_000), received)!, RISK, received, NOW, IDS);
    expect(data).toMatchObject(IDS);
  });

  it("gives no counterparty the evaluation did not see, and none for another address than the transaction's other side", () => {
    const plain = evaluateLargeTransfer(alert("large_transfer", 1_000), received)!;
    const { data } = triggeredPayload(alert("large_transfer", 1_000), plain, RISK, received, NOW, IDS);
    expect(data.direction).toBe("received");
    expect("counterparty" in data).toBe(false);
    const elsewhere = seen(plain, counterparty({ address: THIRD, labels: [] }));
    expect("counterparty" in triggeredPayload(alert("large_transfer", 1_000), elsewhere, RISK, received, NOW, IDS).data).toBe(false);
  });

  it("keeps the fields as JSON carries them: the stored payload reads back the same", () => {
    const firing = evaluateSuspiciousCounterparty(alert("suspicious_counterparty", 75), sent, OFAC)!;
    const payload = triggeredPayload(alert("suspicious_counterparty", 75), firing, RISK, sent, NOW, IDS);
    expect(JSON.parse(JSON.stringify(payload))).toEqual(payload);
  });
});

describe("the email of a firing with a labelled counterparty", () => {
  it("names each label's source in its facts, in the text part and the HTML part", () => {
    const sent = tx({ amount: 12.5, token: "SOL", mint: null, from: WALLET, to: OTHER });
    const firing = evaluateSuspiciousCounterparty(alert("suspicious_counterparty", 75), sent, OFAC)!;
    const email = renderEmail(triggeredPayload(alert("suspicious_counterparty", 75), firing, RISK, sent, NOW, IDS));
    expect(email.text).toMatch(/^Counterparty risk: +100\/100$/m);
    expect(email.text).toMatch(/^Counterparty labels: +sanctioned \(score 100, source OFAC SDN\); mixer \(score 90, source vendor-x\)$/m);
    expect(email.html).toContain("<th align=\"left\">Counterparty labels</th><td>sanctioned (score 100, source OFAC SDN); mixer (score 90, source vendor-x)</td>");
  });

  it("says so when the counterparty has no label, and its risk is unknown", () => {
    const received = tx({ from: OTHER, to: WALLET });
    const firing = seen(evaluateLargeTransfer(alert("large_transfer", 1_000), received), counterparty({ labels: [] }));
    const { text } = renderEmail(triggeredPayload(alert("large_transfer", 1_000), firing, RISK, received, NOW, IDS));
    expect(text).toMatch(/^Counterparty risk: +unknown$/m);
    expect(text).toMatch(/^Counterparty labels: +none$/m);
  });

  it("says \"no source\" for a label loaded without one, never a dangling \"source )\", whether the payload has null or a stored \"\"", () => {
    const sent = tx({ from: WALLET, to: OTHER });
    const unsourced = counterparty({ labelScore: 100, labelCategory: "sanctioned", labels: [{ category: "sanctioned", score: 100, source: null }] });
    const firing = evaluateSuspiciousCounterparty(alert("suspicious_counterparty", 75), sent, unsourced)!;
    const payload = triggeredPayload(alert("suspicious_counterparty", 75), firing, RISK, sent, NOW, IDS);
    expect(payload.data.counterparty?.labels).toEqual([{ category: "sanctioned", score: 100, source: null }]);
    // A payload made until 2026-11-28 (stored, then redelivered) carries "" for it.
    const stored = { ...payload, data: { ...payload.data, counterparty: { ...payload.data.counterparty!, labels: [{ category: "sanctioned" as const, score: 100, source: "" }] } } };
    for (const email of [renderEmail(payload), renderEmail(stored)]) {
      expect(email.text).toMatch(/^Counterparty labels: +sanctioned \(score 100, no source\)$/m);
      expect(email.html).toContain("<td>sanctioned (score 100, no source)</td>");
      expect(email.text).not.toContain("source )");
    }
  });

  it("keeps a label source written across lines on its one row", () => {
    const sent = tx({ from: WALLET, to: OTHER });
    const odd = counterparty({ labelScore: 95, labelCategory: "scam", labels: [{ category: "scam", score: 95, source: "vendor\nx\u202e" }] });
    const firing = evaluateSuspiciousCounterparty(alert("suspicious_counterparty", 75), sent, odd)!;
    const { text } = renderEmail(triggeredPayload(alert("suspicious_counterparty", 75), firing, RISK, sent, NOW, IDS));
    expect(text).toMatch(/^Counterparty labels: +scam \(score 95, source vendor x\)$/m);
  });
});
