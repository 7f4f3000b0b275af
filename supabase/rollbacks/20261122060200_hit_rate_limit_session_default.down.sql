-- Down step of 20261122060200_hit_rate_limit_session_default.sql (run by
-- scripts/test-migrations.ts as the owner role; see docs/versioning.md).
-- A default cannot be removed by create or replace: the function is made again
-- as 20261122060000 left it.
drop function app_private.hit_rate_limit(uuid, text, integer, uuid);
create function app_private.hit_rate_limit(p_user_id uuid, p_operation text, p_window_seconds integer, p_session_id uuid)
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
comment on function app_private.hit_rate_limit(uuid, text, integer, uuid) is
  'Counts one request of a user for an operation in the current fixed window, against the budget of session p_session_id (null: the user''s budget shared by all their sessions); returns the hits so far and the seconds until the window resets. Called by the api function''s own connection role, outside the user transaction, so failed requests still count.';
revoke all on function app_private.hit_rate_limit(uuid, text, integer, uuid) from public, anon, authenticated, service_role;
