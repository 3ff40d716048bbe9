// Postgres aborts one side of a deadlock or a serialization conflict; the aborted transaction
// rolled back whole, so running it again is safe. Anything else is the caller's problem.
const RETRYABLE_SQLSTATES = new Set([
  "40P01", // deadlock_detected
  "40001", // serialization_failure
]);
const ATTEMPTS = 4;

export async function retryTransaction<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= ATTEMPTS || typeof code !== "string" || !RETRYABLE_SQLSTATES.has(code)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 30));
    }
  }
}
