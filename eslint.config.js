// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules", "drizzle", "var", "coverage", "bench/results"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through loadConfig (src/config.ts)." },
      ],
    },
  },
  {
    // The one reader of process.env, and the scripts and tests that hand an environment to it.
    files: ["src/config.ts", "src/bin/**", "test/**", "bench/**", "drizzle.config.ts", "vitest.config.ts"],
    rules: { "no-restricted-properties": "off" },
  },
);
