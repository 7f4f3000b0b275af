-- What: app_private.rate_limit_counters becomes UNLOGGED.
-- Why: every authenticated request counts itself with an autocommit
-- insert ... on conflict into this table (app_private.hit_rate_limit), i.e.
-- one WAL write and WAL flush per request before any real work
-- (docs/performance.md: the auth round trips of every push and pull). An
-- unlogged table writes no WAL, so that commit no longer waits for a flush.
-- Trade-off, accepted: after a crash (not a clean restart) Postgres truncates
-- unlogged tables, so every user's counters restart from zero — at worst a
-- user gets one extra window of requests. Counters are also not replicated
-- to read replicas, which never read them. The foreign key to auth.users
-- (a logged table) stays valid: an unlogged table may reference a logged one.
-- rollback:
--   alter table app_private.rate_limit_counters set logged;

alter table app_private.rate_limit_counters set unlogged;
comment on table app_private.rate_limit_counters is
  'Requests per user, operation and fixed time window; written by the api function, purged after the window. UNLOGGED: no WAL per request; counters reset after a database crash, which a rate limit tolerates.';
