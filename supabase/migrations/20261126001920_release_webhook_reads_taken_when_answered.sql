-- What: the comments of app_private.release_webhook_reads and of its insert
-- policy say what the table now holds: the webhook-id of each signed read that
-- answered (GET or HEAD /v1/releases/{id}/feedback, 200). No change of
-- structure, grants or policies.
-- Why: the api function took a read's webhook-id before it read, so a read
-- refused after the signature check (400, 404), one that failed (503) and a
-- HEAD each spent their id, and CI could not retry them with the same headers.
-- It now checks the id first (a spent one is 401 before anything is read) and
-- takes it once the read has answered, before the answer leaves
-- (functions/api/lib/webhook-auth.ts); of the same headers sent at once only
-- the first to take it gets its answer. docs/test-builds.md, "What CI signs";
-- tests/integration/release-signed-reads.test.ts.
-- Rollback: supabase/rollbacks/20261126001920_release_webhook_reads_taken_when_answered.down.sql

comment on table app_private.release_webhook_reads is
  'The webhook-id of each signed read of the release manager (GET or HEAD /v1/releases/{id}/feedback) that answered, taken once: a later request with it is a replay (401). A read refused after the signature check (400, 404) or failed (503) records nothing, so CI may send it again. Kept only while its webhook-timestamp could still pass.';
comment on policy "Release managers can record read ids" on app_private.release_webhook_reads is
  'Each signed read that answered records its webhook-id, once.';
