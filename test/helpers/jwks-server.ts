// An identity provider's JWKS endpoint on loopback, for the tests of key fetching: it serves
// whatever keys the test publishes at the moment, or fails (503) while the test says it is down,
// and counts the fetches.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { JWK } from "jose";

export type JwksEndpoint = {
  /** The keys served now. */
  keys: () => readonly JWK[];
  /** false: answer 503, as a provider in maintenance. */
  up: () => boolean;
  /** Called on every request, answered or failed. */
  onFetch: () => void;
};

export async function startJwksServer(endpoint: JwksEndpoint): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => {
    endpoint.onFetch();
    if (!endpoint.up()) return void res.writeHead(503, { "content-type": "text/plain" }).end("maintenance");
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: endpoint.keys() }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
