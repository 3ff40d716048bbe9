// Where the tests find the machine's real PostgreSQL and Redis. A dependency that is down
// fails the tests that need it; nothing is skipped.
export const TEST_ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
export const TEST_JWT_SECRET = "test-secret-that-is-long-enough-0123456789";

export function databaseUrl(name: string): string {
  const url = new URL(TEST_ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
