// What the risk-factor tests do over and over: watch a wallet (a risk_score_increase alert at
// threshold 10), ingest a batch and wait for the pipeline, read the score the API shows.
import type { RiskFactor, Transaction } from "../../src/domain/types.ts";
import type { TestApp } from "./app.ts";
import { createAlert, settled, track } from "./pipeline.ts";
import { bearer, ingestTransactions } from "./seed.ts";

export type RiskWatch = ReturnType<typeof riskWatch>;

export function riskWatch(t: TestApp, token: string) {
  return {
    /** A tracked wallet with a risk_score_increase alert at threshold 10. */
    async watchedWallet() {
      const wallet = await track(t, token);
      const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
      return { ...wallet, alertId };
    },
    /** The wallet's riskScore and riskFactors (sorted) as GET /v1/wallets/{id} shows them. */
    async riskOf(walletId: string) {
      const res = await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(token) });
      const body = res.json() as { riskScore: number; riskFactors: RiskFactor[] };
      return { riskScore: body.riskScore, riskFactors: [...body.riskFactors].sort() };
    },
    /** Ingests the transactions as one batch and waits for the pipeline. */
    async ingest(txs: Transaction[]) {
      await ingestTransactions(t, token, txs);
      await settled(t);
    },
  };
}
