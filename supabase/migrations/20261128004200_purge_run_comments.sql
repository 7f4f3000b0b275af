-- What: the comments the purge's move to a DO block (20261128004100) left
-- stale: account_deletion_requests.last_attempt_at named the dropped procedure
-- purge_due_accounts, and begin_purge_attempt's comment had a lower-case
-- sentence; purge_run_command is STABLE, not IMMUTABLE (the text it returns
-- holds p_now as text, which depends on the session's DateStyle and TimeZone).
-- Rollback: supabase/rollbacks/20261128004200_purge_run_comments.down.sql.

comment on column app_private.account_deletion_requests.last_attempt_at is 'When the purge last began an attempt at this account (null: never), recorded before the attempt''s work (the purge run, the DO block of purge_run_command, commits it first): a run tries requests never tried first, then the least recently tried, so one whose attempt failed or was cancelled goes behind the others.';
comment on function app_private.begin_purge_attempt(p_now timestamp with time zone, p_tried_before timestamp with time zone) is 'The purge''s next account: takes the request due at p_now not tried since p_tried_before (the run''s start: each is tried once a run) that was never tried, else least recently (then oldest due, then by user id; FOR UPDATE SKIP LOCKED), sets its last_attempt_at and returns its request_id (null when none is left). The purge run (the DO block of purge_run_command) commits this before the account''s work (purge_account), so a cancelled attempt stays recorded. Runs as the owner; service_role (for the purge run, purge_run_command).';
alter function app_private.purge_run_command(timestamptz, integer) stable;
