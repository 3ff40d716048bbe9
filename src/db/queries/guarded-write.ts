// What a change or delete of one item (a wallet, an alert) comes to when the caller may guard it
// with a condition on the item as it is (an If-Match, http/etag.ts). The condition is judged
// inside the writing transaction, on the item read under its row lock, so that no other write
// can come between the check and the change; the answer's row is read by that transaction too.

/** Whether the item as it is now, as the owner would read it, lets the write go ahead. */
export type Precondition<Row> = (current: Row) => boolean;

export type WriteRefused = { kind: "not-found" } | { kind: "precondition-failed" };
export type Changed<Row> = { kind: "changed"; row: Row } | WriteRefused;
export type Deleted = { kind: "deleted" } | WriteRefused;
