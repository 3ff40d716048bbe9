-- A label change's rescore runs in chunks, each committed on its own (src/pipeline/relabel.ts); a
-- run that took it over (its process ended mid-rescore) started again from the first chunk: after
-- a large import, minutes of work done again, at every take-over should the process keep ending
-- at the same point. Now each chunk records, in its own transaction, the last tracked address it
-- rescored (done_through, in address order: byte order, as the rescore sorts them), and a run
-- that takes the rescore over continues after it. Null: no chunk committed yet (every record
-- left by an earlier version: its rescore starts from the first chunk, as before).
-- A nullable column without a default: a change of the catalog only, nothing rewritten.
ALTER TABLE "label_rescores" ADD COLUMN "done_through" text COLLATE "C";
