ALTER TABLE "address_state" ADD COLUMN "transaction_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "address_state" s SET "transaction_count" = c.n
FROM (
  SELECT address, count(*) AS n FROM (
    SELECT from_address AS address FROM transactions
    UNION ALL
    SELECT to_address FROM transactions WHERE to_address <> from_address
  ) t GROUP BY address
) c
WHERE c.address = s.address;
