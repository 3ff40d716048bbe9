// The risk engine (DESIGN.md section 5): factors from labels and behaviour, and the score.
export { FLAGGED_LABEL_SCORE, RISK_RULES, labelFactor, riskFactors, type RiskInputs } from "./factors.ts";
export { FACTOR_WEIGHTS, explainScore, riskScore } from "./score.ts";
export { dealingOf, type Dealing } from "./dealings.ts";
export { LAMPORTS_PER_SOL, addSol, lamportsOf } from "./lamports.ts";
