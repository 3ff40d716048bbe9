// For routes that take no body (a DELETE, an alert's test, a secret rotation). DESIGN.md
// section 3: unknown body fields are rejected, not ignored. A DELETE that quietly dropped
// {"keepAlerts": true} and deleted anyway would do, irreversibly, what the caller asked not to.
import { invalid } from "./problem.ts";

/**
 * Refuses a body that carries fields with a 400 (an empty one, or {}, passes: many clients
 * send Content-Type: application/json on every request, and an empty body passes whatever its
 * Content-Type, json-body.ts). A body sent all the same meets the body parser first, hence
 * these routes' documented 413 and 415.
 */
export function assertNoBody(body: unknown): void {
  if (body === undefined || body === null) return;
  if (typeof body === "object" && Object.keys(body).length === 0) return;
  throw invalid("body", "must be empty: this endpoint takes no fields");
}
