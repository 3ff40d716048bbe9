-- The owner's address for the notice that their alert was disabled (alert health): the token's
-- email claim, stored when the alert is created and refreshed by a PATCH whose token has one.
-- Nullable: alerts created before this migration, or by a token without a usable claim, have
-- none, and their notice falls back to the recipient of an email alert. Not in the triggers of
-- 0002: evaluation never reads it, so changing it must not reload the workers' alert rules.
ALTER TABLE "alerts" ADD COLUMN "owner_email" text;
