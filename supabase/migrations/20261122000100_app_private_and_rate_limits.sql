-- What: the private schema for everything the Data API must not reach, and
-- per-user, per-operation request counters for the `api` function.
-- Why: rate limits must hold across every function instance, so their state
-- lives in Postgres; `app_private` is not in supabase/config.toml [api] schemas.
-- rollback:
--   drop function if exists app_private.hit_rate_limit(uuid, text, integer);
--   drop table if exists app_private.rate_limit_counters;
--   drop schema if exists app_private;

create schema if not exists app_private;
comment on schema app_private is 'tidesync data reached only through the api edge function (not exposed by the Data API).';

-- Supabase grants the API roles broad default privileges; start from nothing.
revoke all on schema app_private from public;
grant usage on schema app_private to authenticated, service_role;

create table app_private.rate_limit_counters (
  user_id uuid not null references auth.users (id) on delete cascade,
  operation text not null check (operation ~ '^[a-z][a-z0-9_.]*$' and length(operation) <= 64),
  window_start timestamptz not null,
  hits integer not null default 1 check (hits > 0),
  primary key (user_id, operation, window_start)
);
comment on table app_private.rate_limit_counters is 'Requests per user, operation and fixed time window; written by the api function, purged after the window.';
comment on column app_private.rate_limit_counters.window_start is 'Start of the fixed window (epoch-aligned multiple of its length).';
create index rate_limit_counters_window_start_idx on app_private.rate_limit_counters (window_start);

alter table app_private.rate_limit_counters enable row level security;
revoke all on app_private.rate_limit_counters from public, anon, authenticated, service_role;
grant select on app_private.rate_limit_counters to authenticated;
grant select, delete on app_private.rate_limit_counters to service_role;

create policy "Users can read their own rate limit counters"
  on app_private.rate_limit_counters
  for select
  to authenticated
  using (user_id = (select auth.uid()));

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

create function app_private.purge_rate_limit_counters(p_now timestamptz default now(), p_batch integer default 10000)
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
comment on function app_private.purge_rate_limit_counters(timestamptz, integer) is
  'Deletes counters of windows that ended over a day before p_now, at most p_batch rows a call; returns how many.';
revoke all on function app_private.purge_rate_limit_counters(timestamptz, integer) from public, anon, authenticated;
grant execute on function app_private.purge_rate_limit_counters(timestamptz, integer) to service_role;
