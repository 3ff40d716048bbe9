// Generated clients name their methods after operationIds: the names come from the method and
// path alone, so they change only when the path does. These are the names clients have.
import { describe, expect, it } from "vitest";
import { operationIdOf } from "../../src/http/openapi-operations.ts";

describe("operationIdOf", () => {
  it.each([
    ["GET", "/v1/wallets", "listWallets"],
    ["POST", "/v1/wallets", "createWallet"],
    ["GET", "/v1/wallets/:walletId", "getWallet"],
    ["PATCH", "/v1/wallets/:walletId", "updateWallet"],
    ["DELETE", "/v1/wallets/:walletId", "deleteWallet"],
    ["GET", "/v1/transactions", "listTransactions"],
    ["POST", "/v1/risk/alerts", "createRiskAlert"],
    ["GET", "/v1/risk/alerts", "listRiskAlerts"],
    ["GET", "/v1/risk/alerts/:alertId", "getRiskAlert"],
    ["PATCH", "/v1/risk/alerts/:alertId", "updateRiskAlert"],
    ["DELETE", "/v1/risk/alerts/:alertId", "deleteRiskAlert"],
    ["GET", "/v1/risk/alerts/:alertId/events", "listRiskAlertEvents"],
    ["POST", "/v1/risk/alerts/:alertId/test", "testRiskAlert"],
    ["POST", "/v1/risk/alerts/:alertId/rotate-secret", "rotateRiskAlertSecret"],
    ["GET", "/v1/notifications/:notificationId", "getNotification"],
    ["POST", "/v1/notifications/:notificationId/redeliver", "redeliverNotification"],
    ["POST", "/v1/ingest/transactions", "ingestTransactions"],
    ["POST", "/v1/ingest/accounts", "ingestAccounts"],
    ["POST", "/v1/ingest/helius", "ingestHelius"],
    ["PUT", "/v1/risk/labels", "putRiskLabels"],
    ["DELETE", "/v1/risk/labels", "deleteRiskLabels"],
    ["GET", "/v1/risk/labels/:address", "getRiskLabel"],
    ["GET", "/v1/categories/:categoryId", "getCategory"],
  ])("%s %s is %s", (method, url, operationId) => {
    expect(operationIdOf(method, url)).toBe(operationId);
  });
});
