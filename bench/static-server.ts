// The API benchmark's yardstick: a bare Fastify process that answers GET /v1/wallets with a
// fixed JSON body of the same size as the real page — no auth, no database, no Redis.
import Fastify from "fastify";

const body = process.env.STATIC_BODY ?? "{}";
const app = Fastify({ logger: false });
app.get("/v1/wallets", async (_request, reply) => reply.type("application/json").send(body));
await app.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" });
process.send?.({ port: (app.server.address() as { port: number }).port });
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
