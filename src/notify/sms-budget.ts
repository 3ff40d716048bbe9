// How many SMS one caller's alerts may send a clock hour (SMS_PER_CALLER_PER_HOUR). Firings are
// not capped, the operator pays for every SMS, and anyone can make a public address fire by
// sending it dust: one token's 50 SMS alerts on each of 200 such addresses sent 10,000 texts
// per transaction that cost its sender a fraction of a cent. Counted as every channel budget is
// (channel-budget.ts): once per notification, at its first attempt (Twilio bills only the
// message it takes, however often it was busy), and again at a redelivery.
import { createChannelBudget, type BudgetTerms, type ChannelBudgetDeps } from "./channel-budget.ts";
import { PERMANENT_ERROR_CODES } from "./retry-policy.ts";

const SMS_BUDGET: BudgetTerms = {
  setting: "SMS_PER_CALLER_PER_HOUR",
  field: "smsPerCallerPerHour",
  key: "sms-budget",
  messages: "SMS",
  kind: "SMS",
  errorCode: PERMANENT_ERROR_CODES.smsBudgetSpent,
};

/** `deps.perHour`: SMS_PER_CALLER_PER_HOUR; `deps.onSpent`: wallet_alerts_sms_budget_refusals_total. */
export const createSmsBudget = (deps: ChannelBudgetDeps) => createChannelBudget(deps, SMS_BUDGET);
