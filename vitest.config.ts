import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    setupFiles: ["test/helpers/leftovers.ts"],
    pool: "forks",
    // Two cores: more parallel files only make each one slower and the timings noisier.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
