// How many emails one caller's alerts may send a clock hour (EMAIL_PER_CALLER_PER_HOUR).
// Firings are not capped, and anyone can make a public address fire by sending it dust: one
// caller's 50 email alerts on each of 200 such addresses sent 10,000 emails per transaction,
// all through the operator's one SMTP account, which the provider then throttles or suspends,
// and every other caller's emails stop with it. Counted as every channel budget is
// (channel-budget.ts): once per notification, at its first attempt (an SMTP server busy with a
// 4xx took nothing), and again at a redelivery.
import { createChannelBudget, type BudgetTerms, type ChannelBudgetDeps } from "./channel-budget.ts";
import { PERMANENT_ERROR_CODES } from "./retry-policy.ts";

const EMAIL_BUDGET: BudgetTerms = {
  setting: "EMAIL_PER_CALLER_PER_HOUR",
  field: "emailPerCallerPerHour",
  key: "email-budget",
  messages: "emails",
  kind: "email",
  errorCode: PERMANENT_ERROR_CODES.emailBudgetSpent,
};

/** `deps.perHour`: EMAIL_PER_CALLER_PER_HOUR; `deps.onSpent`: wallet_alerts_email_budget_refusals_total. */
export const createEmailBudget = (deps: ChannelBudgetDeps) => createChannelBudget(deps, EMAIL_BUDGET);
