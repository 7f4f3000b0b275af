-- What: app_private.hand_over_lists_of_deleted_user() (and the
-- hand_over_lists() it calls) runs with enable_seqscan off.
-- Why: the trigger runs once per deleted user, thousands of times when one
-- statement deletes many users, with plans made while the tables' statistics
-- are stale; hand_over_lists' lock of the user's lists planned a sequential
-- scan of public.lists, once per user: a bulk delete of 8,000 users took
-- 0.96 ms per user against 0.48 for 2,000 (quadratic; 0.25 without the
-- trigger). Every lookup it makes is by a user or list key, so index scans
-- only: 0.32 / 0.32 ms per user (`npm run bench:bulk`, docs/performance.md).
-- Rollback: supabase/rollbacks/20261126001600_hand_over_on_user_delete_by_index.down.sql

alter function app_private.hand_over_lists_of_deleted_user() set enable_seqscan = off;
