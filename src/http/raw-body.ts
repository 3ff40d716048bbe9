// A route's request body as received, byte for byte, for a handler that must read what JSON.parse
// loses: the literal of a number it rounds (src/ingest/exact-token-amounts.ts). Used as the
// route's preParsing hook (`preParsing: keepRawBody`), then `rawBody(request)` in the handler.
//
// Kept by a stream passing each chunk on to Fastify's reader, so that the app's JSON parser stays
// the same for every route. The chunks are the very buffers Fastify reads: keeping them costs one
// copy of the body when it came in pieces (rawBody joins them), none when it came in one.
import { Transform, pipeline, type Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";

const receivedChunks = new WeakMap<FastifyRequest, Buffer[]>();

/** The preParsing hook: keeps the chunks of the body, up to the route's body limit. */
export async function keepRawBody(request: FastifyRequest, _reply: FastifyReply, payload: Readable): Promise<Readable> {
  const chunks: Buffer[] = [];
  receivedChunks.set(request, chunks);
  const limit = request.routeOptions.bodyLimit;
  let length = 0;
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      length += chunk.length;
      // Past the limit Fastify answers 413 and the handler never runs: nothing more to keep.
      if (length <= limit) chunks.push(chunk);
      callback(null, chunk);
    },
  });
  // An error of the request (the client gone) reaches Fastify's reader through the tee.
  pipeline(payload, tee, () => {});
  return tee;
}

/** The body as received, on a route whose preParsing hook is keepRawBody (else empty). */
export function rawBody(request: FastifyRequest): Buffer {
  const chunks = receivedChunks.get(request) ?? [];
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
