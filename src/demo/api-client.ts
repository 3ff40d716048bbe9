// The demo talks to the API over HTTP like any client, with a token it minted (and mints again
// before the API would refuse it: see src/sim/tokens.ts).

/** The token to send with the next request. */
export type TokenSource = () => Promise<string>;

export type ApiCall = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;

export function createApiClient(baseUrl: string, token: TokenSource): ApiCall {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(new URL(path, baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${await token()}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) {
      let detail = text;
      try {
        detail = (JSON.parse(text) as { detail?: string }).detail ?? text;
      } catch {
        // not JSON: keep the raw text
      }
      throw new Error(`${method} ${path} → ${response.status}: ${detail}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
