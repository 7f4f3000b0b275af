-- Down step of 20261122060000_rate_limits_per_session.sql (run by
-- scripts/test-migrations.ts as the owner role; see docs/versioning.md).
-- Per-session counters go (the old key cannot hold them); per-user ones stay.
create or replace function app_private.purge_rate_limit_counters(p_now timestamptz default now(), p_batch integer default 10000)
returns integer
language sql
volatile
security invoker
set search_path = ''
as $$
  with doomed as (
    select user_id, operation, window_start
    from app_private.rate_limit_counters
    where window_start < p_now - interval '1 day'
    limit p_batch
  ), deleted as (
    delete from app_private.rate_limit_counters c
    using doomed d
    where c.user_id = d.user_id and c.operation = d.operation and c.window_start = d.window_start
    returning 1
  )
  select count(*)::integer from deleted;
$$;

drop function app_private.hit_rate_limit(uuid, text, integer, uuid);
create function app_private.hit_rate_limit(p_user_id uuid, p_operation text, p_window_seconds integer)
returns table (hits integer, reset_seconds integer)
language sql
volatile
security invoker
set search_path = ''
as $$
  insert into app_private.rate_limit_counters as c (user_id, operation, window_start, hits)
  values (
    p_user_id,
    p_operation,
    to_timestamp(floor(extract(epoch from now()) / p_window_seconds) * p_window_seconds),
    1
  )
  on conflict (user_id, operation, window_start)
  do update set hits = c.hits + 1
  returning
    c.hits,
    greatest(1, ceil(extract(epoch from (c.window_start + make_interval(secs => p_window_seconds) - now())))::integer);
$$;
comment on function app_private.hit_rate_limit(uuid, text, integer) is
  'Counts one request of a user for an operation in the current fixed window; returns the hits so far and the seconds until the window resets. Called by the api function''s own connection role, outside the user transaction, so failed requests still count.';
revoke all on function app_private.hit_rate_limit(uuid, text, integer) from public, anon, authenticated, service_role;

delete from app_private.rate_limit_counters where session_id <> '00000000-0000-0000-0000-000000000000';
alter table app_private.rate_limit_counters drop constraint rate_limit_counters_pkey;
alter table app_private.rate_limit_counters drop column session_id;
alter table app_private.rate_limit_counters add constraint rate_limit_counters_pkey primary key (user_id, operation, window_start);
