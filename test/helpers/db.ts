import { createHash, randomBytes } from "node:crypto";
import postgres from "postgres";
import { inject } from "vitest";
import { TEST_ADMIN_DATABASE_URL, databaseUrl } from "./env.ts";

/**
 * A fresh, migrated database for one test file, cloned from the template. It is named from
 * the file so that a failed run leaves it behind to inspect; it is dropped when drop() runs.
 * `empty: true` gives one without any table instead (a database nobody migrated).
 */
export async function createTestDatabase(
  label: string,
  options: { empty?: boolean } = {},
): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const hash = createHash("sha1").update(label).digest("hex").slice(0, 10);
  const name = `wa_test_${hash}_${randomBytes(3).toString("hex")}`;
  createdDatabases.add(name);
  const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name} template ${options.empty ? "template0" : inject("templateDatabase")}`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(name),
    name,
    drop: async () => {
      const cleanup = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
      try {
        await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/** The databases this test file created: test/helpers/leftovers.ts checks that they are gone after it. */
const createdDatabases = new Set<string>();

export function createdTestDatabases(): readonly string[] {
  return [...createdDatabases];
}

/** The prefixes this test file was given: test/helpers/leftovers.ts checks them after the file. */
const issuedPrefixes = new Set<string>();

export function uniqueQueuePrefix(label: string): string {
  const prefix = `{wa-test-${createHash("sha1").update(label).digest("hex").slice(0, 8)}-${randomBytes(3).toString("hex")}}`;
  issuedPrefixes.add(prefix);
  return prefix;
}

export function issuedQueuePrefixes(): readonly string[] {
  return [...issuedPrefixes];
}
