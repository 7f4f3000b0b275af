-- What: app_private.track_sync_changes() runs its statements with JIT
-- compilation off (a setting of the function, like its search_path).
-- Why: the trigger's update branch joins the statement's old and new rows
-- (transition tables, which have no statistics), and the planner estimates
-- that join at N²/200 rows: past ~2,000 updated rows its cost crosses
-- jit_above_cost, and Postgres (Supabase ships JIT on) spends ~0.4 s
-- compiling and optimising machine code for a statement that runs each
-- expression once per row. One UPDATE of 20,000 rows of a synced table took
-- 1.19 s, 0.80 s without JIT; a move of them 1.44 s, 1.03 s; an account
-- deletion whose tasks lose their creator pays the same (docs/performance.md,
-- "2026-11-26 (midday)"). The other branches and the other triggers never
-- reached the threshold. What the trigger writes is unchanged.
-- tests/integration/sync-trigger-scale.test.ts shows it.
-- Rollback: supabase/rollbacks/20261126000600_sync_trigger_without_jit.down.sql

alter function app_private.track_sync_changes() set jit = off;
