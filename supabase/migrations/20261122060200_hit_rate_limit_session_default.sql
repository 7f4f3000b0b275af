-- What: app_private.hit_rate_limit's p_session_id gets a default (null: the
-- user's shared budget), so the three-argument form works again.
-- Why: 20261122060000 replaced hit_rate_limit(uuid, text, integer) by a
-- four-argument form; an api function instance deployed before it (during a
-- rolling deploy) and SQL written against the old form (tests, scripts) call
-- it with three arguments.
-- Rollback: supabase/rollbacks/20261122060200_hit_rate_limit_session_default.down.sql

create or replace function app_private.hit_rate_limit(p_user_id uuid, p_operation text, p_window_seconds integer, p_session_id uuid default null)
returns table (hits integer, reset_seconds integer)
language sql
volatile
security invoker
set search_path = ''
as $$
  insert into app_private.rate_limit_counters as c (user_id, operation, session_id, window_start, hits)
  values (
    p_user_id,
    p_operation,
    coalesce(p_session_id, '00000000-0000-0000-0000-000000000000'),
    to_timestamp(floor(extract(epoch from now()) / p_window_seconds) * p_window_seconds),
    1
  )
  on conflict (user_id, operation, session_id, window_start)
  do update set hits = c.hits + 1
  returning
    c.hits,
    greatest(1, ceil(extract(epoch from (c.window_start + make_interval(secs => p_window_seconds) - now())))::integer);
$$;
