-- What: account deletion. A user asks for it (POST /v1/users/me/deletion →
-- app_private.request_account_deletion), it waits for a grace period they can
-- cancel in (app_private.cancel_account_deletion), then the purge
-- (app_private.run_account_deletions, pg_cron every 10 minutes where pg_cron
-- exists) hands over the shared lists the user owned, runs the
-- app_private.before_account_purge hook and deletes the auth.users row, whose
-- cascades erase every row that belongs to the user. What happened, and when,
-- stays in app_private.account_deletion_audit, which holds no personal data.
-- Why: the app stores (Apple 5.1.1(v), Google Play) and GDPR require a
-- self-service deletion that removes the account and its data; supabase-js
-- cannot delete its own user, so the database does it, without superuser
-- rights (the functions run as the migration owner, hosted `postgres`).
-- docs/account-deletion.md tells the flow, docs/retention.md what survives.
--
-- Down step: supabase/rollbacks/20261122050000_account_deletion.down.sql.

-- ------------------------------------------------------------------ requests
create table app_private.account_deletion_requests (
  user_id uuid primary key references auth.users (id) on delete cascade,
  request_id uuid not null unique default gen_random_uuid(),
  requested_at timestamptz not null default now(),
  scheduled_for timestamptz not null,
  constraint account_deletion_requests_after_request check (scheduled_for > requested_at)
);
comment on table app_private.account_deletion_requests is
  'Pending account deletions, one per user: the account is purged at scheduled_for unless the user cancels first. Written only by request_account_deletion / cancel_account_deletion; the purge''s delete of auth.users removes the row.';
comment on column app_private.account_deletion_requests.request_id is
  'Random id of this request; the audit trail names the request by it (never by the user), so nothing links the trail to the person once the row is gone.';
create index account_deletion_requests_due_idx on app_private.account_deletion_requests (scheduled_for);
comment on index app_private.account_deletion_requests_due_idx is 'The purge: due requests, oldest first.';

alter table app_private.account_deletion_requests enable row level security;
revoke all on app_private.account_deletion_requests from public, anon, authenticated, service_role;
grant select on app_private.account_deletion_requests to authenticated, service_role;

create policy "Users can read their own deletion request"
  on app_private.account_deletion_requests for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own deletion request" on app_private.account_deletion_requests is
  'A user sees whether their own account is scheduled for deletion (GET /v1/users/me/deletion, session start); nobody else''s.';

-- --------------------------------------------------------------------- audit
create table app_private.account_deletion_audit (
  id bigint generated always as identity primary key,
  request_id uuid not null,
  event text not null constraint account_deletion_audit_event_known check (event in ('requested', 'cancelled', 'purged')),
  occurred_at timestamptz not null default now(),
  scheduled_for timestamptz,
  lists_handed_over integer constraint account_deletion_audit_lists_handed_over_not_negative check (lists_handed_over >= 0),
  constraint account_deletion_audit_scheduled_iff_requested check ((event = 'requested') = (scheduled_for is not null)),
  constraint account_deletion_audit_handed_over_iff_purged check ((event = 'purged') = (lists_handed_over is not null))
);
comment on table app_private.account_deletion_audit is
  'That an account deletion was requested, cancelled or carried out, and when; kept after the user is gone. No user id, email or name: events of one request share its random request_id only.';
create index account_deletion_audit_request_id_idx on app_private.account_deletion_audit (request_id);
comment on index app_private.account_deletion_audit_request_id_idx is 'The events of one request.';

alter table app_private.account_deletion_audit enable row level security;
revoke all on app_private.account_deletion_audit from public, anon, authenticated, service_role;
grant select on app_private.account_deletion_audit to service_role;

create policy "The service role can read the deletion audit"
  on app_private.account_deletion_audit for select to service_role
  using (true);
comment on policy "The service role can read the deletion audit" on app_private.account_deletion_audit is
  'Operators (service role) read the trail; it names no user, so no user reads it.';

create function app_private.forbid_deletion_audit_rewrite()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  raise exception 'account deletion audit rows are append-only (% refused)', tg_op using errcode = '42501';
end
$$;
comment on function app_private.forbid_deletion_audit_rewrite() is
  'BEFORE UPDATE/DELETE/TRUNCATE trigger of account_deletion_audit: the trail is append-only for every role, the owner included.';
revoke all on function app_private.forbid_deletion_audit_rewrite() from public, anon, authenticated, service_role;

create trigger account_deletion_audit_append_only
  before update or delete on app_private.account_deletion_audit
  for each row execute function app_private.forbid_deletion_audit_rewrite();
create trigger account_deletion_audit_no_truncate
  before truncate on app_private.account_deletion_audit
  for each statement execute function app_private.forbid_deletion_audit_rewrite();

-- ------------------------------------------------------------ request/cancel
create function app_private.request_account_deletion(p_grace_days integer)
returns table (requested_at timestamptz, scheduled_for timestamptz)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_caller uuid := auth.uid();
  v_session uuid := nullif(auth.jwt() ->> 'session_id', '')::uuid;
  v_request uuid;
begin
  if v_caller is null or v_session is null then
    raise exception 'request_account_deletion needs a signed-in caller' using errcode = '42501';
  end if;
  if p_grace_days is null or p_grace_days < 1 then
    raise exception 'p_grace_days must be at least 1' using errcode = 'invalid_parameter_value';
  end if;

  -- A second request keeps the first one's date: asking again never moves it.
  insert into app_private.account_deletion_requests as r (user_id, scheduled_for)
  values (v_caller, now() + make_interval(days => p_grace_days))
  on conflict (user_id) do nothing
  returning r.request_id into v_request;
  if v_request is not null then
    insert into app_private.account_deletion_audit (request_id, event, scheduled_for)
    select r.request_id, 'requested', r.scheduled_for from app_private.account_deletion_requests r where r.user_id = v_caller;
  end if;

  -- Every other session is signed out now (their refresh tokens cascade, their
  -- devices are revoked and lose their push tokens: 20261122020200_devices.sql).
  delete from auth.sessions s where s.user_id = v_caller and s.id <> v_session;
  -- The calling device stays signed in but receives nothing any more.
  update app_private.devices d set push_token = null, push_provider = null
   where d.user_id = v_caller and d.push_token is not null;

  return query
    select r.requested_at, r.scheduled_for from app_private.account_deletion_requests r where r.user_id = v_caller;
end
$$;
comment on function app_private.request_account_deletion(integer) is
  'POST /v1/users/me/deletion: schedules the caller''s account deletion p_grace_days from now (a pending request keeps its date), signs out every other session of the caller and clears the caller''s push tokens; returns the request. Security definer (authenticated may not touch auth.sessions or write the request and audit tables); acts only on auth.uid(); EXECUTE for authenticated only.';
revoke all on function app_private.request_account_deletion(integer) from public, anon, authenticated, service_role;
grant execute on function app_private.request_account_deletion(integer) to authenticated;

create function app_private.cancel_account_deletion()
returns boolean
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_caller uuid := auth.uid();
  v_request uuid;
begin
  if v_caller is null then
    raise exception 'cancel_account_deletion needs a signed-in caller' using errcode = '42501';
  end if;
  delete from app_private.account_deletion_requests r where r.user_id = v_caller returning r.request_id into v_request;
  if v_request is null then
    return false;
  end if;
  insert into app_private.account_deletion_audit (request_id, event) values (v_request, 'cancelled');
  return true;
end
$$;
comment on function app_private.cancel_account_deletion() is
  'DELETE /v1/users/me/deletion: cancels the caller''s pending deletion (true) or does nothing (false). A purge already running for the user holds the request''s row lock, so a cancel waits for it and then finds nothing. EXECUTE for authenticated only.';
revoke all on function app_private.cancel_account_deletion() from public, anon, authenticated, service_role;
grant execute on function app_private.cancel_account_deletion() to authenticated;

-- No push token is registered while a deletion is pending: a new sign-in
-- during the grace period gets no notifications. Runs before
-- devices_10_maintain_state (triggers fire in name order).
create function app_private.withhold_push_token_during_deletion()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if new.push_token is not null
     and exists (select 1 from app_private.account_deletion_requests r where r.user_id = new.user_id) then
    new.push_token := null;
    new.push_provider := null;
  end if;
  return new;
end
$$;
comment on function app_private.withhold_push_token_during_deletion() is
  'BEFORE INSERT/UPDATE trigger of app_private.devices: while the device''s user has a pending account deletion, no push token is stored (notifications stop). Security invoker: the writer of a device row is its user, who may read their own request.';
revoke all on function app_private.withhold_push_token_during_deletion() from public, anon, authenticated, service_role;

create trigger devices_05_withhold_push_token_during_deletion
  before insert or update on app_private.devices
  for each row execute function app_private.withhold_push_token_during_deletion();

-- ----------------------------------------------------------------- hand-over
create function app_private.hand_over_lists(p_user_id uuid)
returns integer
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_handed integer;
begin
  -- Lock the user's lists in one order: two purges whose users share a list
  -- serialize here, so the second sees the first one's hand-over (and never
  -- deletes the member it just made owner without handing over again).
  perform 1 from public.lists l
   where l.id in (select m.list_id from public.list_members m where m.user_id = p_user_id)
   order by l.id
     for update;

  -- Lists where the user is the only owner and someone else is a member pass
  -- to one other member: the longest-standing editor, else the longest-standing
  -- viewer; members not themselves leaving come first. Lists with no other
  -- member go with the account (the keep_a_list_owner trigger).
  with sole_owned as (
    select m.list_id
      from public.list_members m
     where m.user_id = p_user_id and m.role = 'owner'
       and not exists (select 1 from public.list_members o
                        where o.list_id = m.list_id and o.role = 'owner' and o.user_id <> p_user_id)
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id
      from public.list_members m
      join sole_owned s on s.list_id = m.list_id
     where m.user_id <> p_user_id
     order by m.list_id,
              exists (select 1 from app_private.account_deletion_requests r where r.user_id = m.user_id),
              m.role = 'editor' desc,
              m.created_at,
              m.user_id
  )
  update public.list_members m
     set role = 'owner'
    from successor s
   where m.list_id = s.list_id and m.user_id = s.user_id;
  get diagnostics v_handed = row_count;
  return v_handed;
end
$$;
comment on function app_private.hand_over_lists(uuid) is
  'Part of the purge: every list p_user_id is the only owner of and that has other members gets a new owner (the longest-standing editor, else viewer; members with no pending deletion first). Returns how many lists changed hands. Not callable by any API role.';
revoke all on function app_private.hand_over_lists(uuid) from public, anon, authenticated, service_role;

-- ---------------------------------------------------------------------- hook
create function app_private.before_account_purge(p_user_id uuid)
returns void
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
  -- The hook point of the purge (docs/account-deletion.md): it runs in the
  -- purge's transaction, per user, before the auth.users row is deleted. An app
  -- replaces this function (a later migration, `create or replace`) to remove
  -- what the cascades cannot reach: Storage objects through the Storage API,
  -- Sign in with Apple token revocation. tidesync itself uses no bucket and
  -- holds no provider token, so here it only checks that nothing in Storage
  -- still belongs to the user, which would make the delete fail half-way.
  if to_regclass('storage.objects') is not null then
    if exists (select 1 from storage.objects o where o.owner = p_user_id) then
      raise exception 'the user still owns Storage objects: remove them in app_private.before_account_purge first'
        using errcode = 'object_in_use';
    end if;
  end if;
end
$$;
comment on function app_private.before_account_purge(uuid) is
  'Hook of the purge, called per user before the auth.users row is deleted: replace it (create or replace) to remove Storage objects or revoke Sign in with Apple tokens. The shipped version refuses (the user is retried next run) while Storage objects still belong to the user. Not callable by any API role.';
revoke all on function app_private.before_account_purge(uuid) from public, anon, authenticated, service_role;

-- --------------------------------------------------------------------- purge
create function app_private.run_account_deletions(p_now timestamptz default now(), p_batch integer default 20)
returns table (users_deleted integer, lists_handed_over integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_due record;
  v_scopes uuid[];
  v_handed integer;
begin
  if p_now is null or p_batch is null or p_batch < 1 then
    raise exception 'run_account_deletions: p_now is required and p_batch must be positive' using errcode = 'invalid_parameter_value';
  end if;
  users_deleted := 0;
  lists_handed_over := 0;

  -- Due requests, locked: a concurrent run skips them, a concurrent cancel waits.
  for v_due in
    select r.user_id, r.request_id
      from app_private.account_deletion_requests r
     where r.scheduled_for <= p_now
     order by r.scheduled_for, r.user_id
     limit p_batch
       for update skip locked
  loop
    v_scopes := array(select m.list_id from public.list_members m where m.user_id = v_due.user_id);
    v_handed := app_private.hand_over_lists(v_due.user_id);
    perform app_private.before_account_purge(v_due.user_id);

    -- Supabase Auth's refresh_tokens.user_id is text without a foreign key
    -- (GoTrue deletes them itself); those of no session would outlive the user.
    delete from auth.refresh_tokens t where t.user_id = v_due.user_id::text;
    -- The cascades: sessions, refresh tokens, profile, devices, preferences and
    -- their audit, memberships (a list left without members is deleted),
    -- invites, sync usage/ops/access, rate-limit counters, this request.
    -- created_by of lists, tasks and sync state the user wrote becomes null.
    delete from auth.users u where u.id = v_due.user_id;

    -- Sync bookkeeping of the lists that went with the user (no member left
    -- and no former member still to be told): nobody can read it any more.
    delete from app_private.sync_changes c
     where c.scope_id = any (v_scopes)
       and not exists (select 1 from public.lists l where l.id = c.scope_id)
       and not exists (select 1 from app_private.sync_access a where a.scope_id = c.scope_id);
    delete from app_private.sync_records s
     where s.scope_id = any (v_scopes) and s.deleted
       and not exists (select 1 from public.lists l where l.id = s.scope_id)
       and not exists (select 1 from app_private.sync_access a where a.scope_id = s.scope_id);

    insert into app_private.account_deletion_audit (request_id, event, lists_handed_over)
    values (v_due.request_id, 'purged', v_handed);
    users_deleted := users_deleted + 1;
    lists_handed_over := lists_handed_over + v_handed;
  end loop;
  return next;
end
$$;
comment on function app_private.run_account_deletions(timestamptz, integer) is
  'The account purge: deletes at most p_batch accounts whose deletion was scheduled at or before p_now (hand-over of shared lists, the before_account_purge hook, then the auth.users row and its cascades), records each in account_deletion_audit. Idempotent; concurrent runs never take the same request (FOR UPDATE SKIP LOCKED). Runs as the owner (no superuser needed): pg_cron where available, else service_role; tests pass p_now.';
revoke all on function app_private.run_account_deletions(timestamptz, integer) from public, anon, authenticated, service_role;
grant execute on function app_private.run_account_deletions(timestamptz, integer) to service_role;

do $$
begin
  if not exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    if not exists (select 1 from pg_catalog.pg_available_extensions where name = 'pg_cron') then
      raise notice 'pg_cron is not available here: account deletions are not scheduled (run app_private.run_account_deletions() yourself)';
      return;
    end if;
    begin
      create extension pg_cron with schema pg_catalog;
    exception when others then
      raise notice 'pg_cron could not be enabled (%): account deletions are not scheduled', sqlerrm;
      return;
    end;
  end if;
  execute $sql$
    select cron.schedule('tidesync-run-account-deletions', '*/10 * * * *', 'select * from app_private.run_account_deletions()')
  $sql$;
end
$$;
