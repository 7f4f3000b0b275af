-- What: request budgets can belong to one session (one signed-in device)
-- instead of to the user across all their sessions: rate_limit_counters gains
-- session_id (part of the key), hit_rate_limit takes the session to charge.
-- Why: a user with a phone, a tablet and a laptop shared one sync budget
-- (sync.batch 300/min), so syncing devices of one user throttled each other
-- (issue 13). The function decides per operation which budgets are per session
-- (functions/api/lib/rate-limit-rules.ts: sync.pull and sync.batch); the rest
-- stay per user. Sessions are issued by Supabase Auth, whose own sign-in rate
-- limits bound how fast a user can open more of them.
-- Rollback: supabase/rollbacks/20261122060000_rate_limits_per_session.down.sql
-- (per-session counters are dropped: at worst a user gets one fresh window).

alter table app_private.rate_limit_counters
  add column session_id uuid not null default '00000000-0000-0000-0000-000000000000';
comment on column app_private.rate_limit_counters.session_id is
  'The Supabase Auth session (device) a per-session budget belongs to; the nil uuid for a budget shared by all the user''s sessions.';

alter table app_private.rate_limit_counters drop constraint rate_limit_counters_pkey;
alter table app_private.rate_limit_counters add constraint rate_limit_counters_pkey
  primary key (user_id, operation, session_id, window_start);

drop function app_private.hit_rate_limit(uuid, text, integer);
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

create or replace function app_private.purge_rate_limit_counters(p_now timestamptz default now(), p_batch integer default 10000)
returns integer
language sql
volatile
security invoker
set search_path = ''
as $$
  with doomed as (
    select user_id, operation, session_id, window_start
    from app_private.rate_limit_counters
    where window_start < p_now - interval '1 day'
    limit p_batch
  ), deleted as (
    delete from app_private.rate_limit_counters c
    using doomed d
    where c.user_id = d.user_id and c.operation = d.operation and c.session_id = d.session_id and c.window_start = d.window_start
    returning 1
  )
  select count(*)::integer from deleted;
$$;
