-- The outbox of a label change: its relabelled addresses, kept until the tracked addresses
-- that dealt with them are rescored (after the labels commit, so that no batch stored while
-- the labels were being written escapes both the rescore and its own evaluation's label read).
CREATE TABLE "label_rescores" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"addresses" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
