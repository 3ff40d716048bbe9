// The machine's ceilings for the pipeline benchmark, measured in the same run: how fast
// BullMQ adds and runs no-op jobs, and how fast Postgres takes transaction rows as multi-row
// VALUES inserts of 1,000 and as unnest inserts of 5,000 (the form the ingest path uses), from
// one session (DESIGN.md section 9's figure) and from two at once: what Postgres alone can store
// with both cores, the most any pipeline that stores every transaction could reach here.
import { randomBytes } from "node:crypto";
import { Queue, Worker } from "bullmq";
import type { Sql } from "../src/db/client.ts";
import { createWorkerRedis } from "../src/redis.ts";

export type Ceilings = {
  bullmqAddsPerSecond: number;
  bullmqNoopJobsPerSecond: number;
  postgresValuesRowsPerSecond: number;
  postgresUnnestRowsPerSecond: number;
  /** Two sessions inserting at once: both cores busy with Postgres alone. */
  postgresUnnestTwoSessionsRowsPerSecond: number;
};

const JOBS = 20_000;
const ROWS = 100_000;

export async function measureCeilings(sql: Sql, redisUrl: string, prefix: string): Promise<Ceilings> {
  const bullmq = await measureBullmq(redisUrl, prefix);
  const postgres = await measurePostgres(sql);
  return { ...bullmq, ...postgres };
}

async function measureBullmq(redisUrl: string, prefix: string) {
  const connection = createWorkerRedis(redisUrl);
  const queue = new Queue("ceiling-noop", { connection, prefix });
  const addStart = performance.now();
  for (let i = 0; i < JOBS; i += 1000) {
    await queue.addBulk(
      Array.from({ length: 1000 }, (_, k) => ({ name: "noop", data: { i: i + k }, opts: { removeOnComplete: true } })),
    );
  }
  const addSeconds = (performance.now() - addStart) / 1000;

  let done = 0;
  const workerConnection = createWorkerRedis(redisUrl);
  const finished = new Promise<void>((resolve) => {
    const worker = new Worker("ceiling-noop", async () => {}, { connection: workerConnection, prefix, concurrency: 100 });
    worker.on("completed", () => {
      done++;
      if (done === JOBS) void worker.close().then(() => resolve());
    });
  });
  const runStart = performance.now();
  await finished;
  const runSeconds = (performance.now() - runStart) / 1000;
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  workerConnection.disconnect();
  return { bullmqAddsPerSecond: Math.round(JOBS / addSeconds), bullmqNoopJobsPerSecond: Math.round(JOBS / runSeconds) };
}

function rows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    signature: randomBytes(44).toString("base64url"),
    type: "transfer",
    amount: String(i % 1000),
    token: "SOL",
    from_address: randomBytes(22).toString("base64url"),
    to_address: randomBytes(22).toString("base64url"),
    block_time: 1_717_000_000 + i,
    slot: 300_000_000 + i,
    fee: "0.000005",
    status: "success",
    batch_id: "bat_ceiling",
  }));
}

async function measurePostgres(sql: Sql) {
  await sql`drop table if exists bench_ceiling_transactions`;
  await sql`create table bench_ceiling_transactions (like transactions including all)`;
  try {
    const values = rows(ROWS);
    const valuesStart = performance.now();
    for (let i = 0; i < ROWS; i += 1000) {
      await sql`insert into bench_ceiling_transactions ${sql(values.slice(i, i + 1000))}`;
    }
    const valuesSeconds = (performance.now() - valuesStart) / 1000;

    await sql`truncate bench_ceiling_transactions`;
    const unnestSeconds = await insertByUnnest(sql, rows(ROWS), 1);
    await sql`truncate bench_ceiling_transactions`;
    const twoSessionsSeconds = await insertByUnnest(sql, rows(ROWS), 2);
    return {
      postgresValuesRowsPerSecond: Math.round(ROWS / valuesSeconds),
      postgresUnnestRowsPerSecond: Math.round(ROWS / unnestSeconds),
      postgresUnnestTwoSessionsRowsPerSecond: Math.round(ROWS / twoSessionsSeconds),
    };
  } finally {
    await sql`drop table if exists bench_ceiling_transactions`;
  }
}

/** Seconds to insert `all` in unnest statements of 5,000, taken in turn by `sessions` connections. */
async function insertByUnnest(sql: Sql, all: ReturnType<typeof rows>, sessions: number): Promise<number> {
  let next = 0;
  const session = async () => {
    const connection = await sql.reserve();
    try {
      for (let i = next; i < all.length; i = next) {
        next += 5000;
        const part = all.slice(i, i + 5000);
        const col = <K extends keyof (typeof part)[number]>(key: K) => part.map((row) => row[key]);
        await connection`
          insert into bench_ceiling_transactions (signature, type, amount, token, from_address, to_address, block_time, slot, fee, status, batch_id)
          select * from unnest(${col("signature")}::text[], ${col("type")}::text[], ${col("amount")}::text[]::numeric[],
                               ${col("token")}::text[], ${col("from_address")}::text[], ${col("to_address")}::text[],
                               ${col("block_time")}::bigint[], ${col("slot")}::bigint[], ${col("fee")}::text[]::numeric[],
                               ${col("status")}::text[], ${col("batch_id")}::text[])
          on conflict do nothing`;
      }
    } finally {
      connection.release();
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: sessions }, session));
  return (performance.now() - start) / 1000;
}
