import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";

export function transactionRoutes(_deps: Deps): FastifyPluginAsyncTypebox {
  return async () => {};
}
