-- What: app_private.notification_preference_audit, an append-only trail of
-- every change to a user's notification preferences: who (user), from which
-- device and session, when, and the document before and after.
-- Why: notification preferences are a user-facing permission surface
-- (service spec); a change must be traceable and the trail must not be
-- rewritable. Rows are written only by the AFTER trigger on
-- notification_preferences (security definer, so no role needs INSERT);
-- UPDATE, DELETE and TRUNCATE raise for every role, the table owner
-- included. The one exception is erasure: when the user is deleted from
-- auth.users, the foreign key cascade removes their trail with them.
--
-- rollback:
--   drop table if exists app_private.notification_preference_audit;
--   drop function if exists app_private.record_notification_preference_change();
--   drop function if exists app_private.forbid_audit_rewrite();
--   drop function if exists app_private.notification_preference_document(app_private.notification_preferences);

create table app_private.notification_preference_audit (
  user_id uuid not null references auth.users (id) on delete cascade,
  id bigint generated always as identity,
  changed_at timestamptz not null,
  device_id uuid,
  session_id uuid,
  old_version integer,
  new_version integer not null,
  old_document jsonb,
  new_document jsonb not null,
  -- Leading user_id: the FK index and the order of one user's trail in one index.
  primary key (user_id, id)
);
comment on table app_private.notification_preference_audit is
  'Append-only trail of notification preference changes (one row per insert/update of notification_preferences). Readable by its user; nobody can update or delete rows (trigger), except the cascade that erases a deleted user.';
comment on column app_private.notification_preference_audit.changed_at is 'The updated_at of the new preference version (the transaction time of the change).';
comment on column app_private.notification_preference_audit.device_id is
  'The device bound to the session that made the change, if any. No foreign key on purpose: the trail outlives the device row and must never be rewritten by a cascade.';
comment on column app_private.notification_preference_audit.session_id is 'The Supabase session (token session_id claim) that made the change; null for changes made outside a user request (e.g. the seed).';
comment on column app_private.notification_preference_audit.old_version is 'Version before the change; null when the user had only the defaults (first save).';
comment on column app_private.notification_preference_audit.old_document is 'The document before the change ({categories, quiet_hours}); null when it was the defaults.';
comment on column app_private.notification_preference_audit.new_document is 'The document after the change ({categories, quiet_hours}).';

alter table app_private.notification_preference_audit enable row level security;
revoke all on app_private.notification_preference_audit from public, anon, authenticated, service_role;
grant select on app_private.notification_preference_audit to authenticated, service_role;

create policy "Users can read their own notification preference audit"
  on app_private.notification_preference_audit for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own notification preference audit" on app_private.notification_preference_audit is
  'A user reads only the trail of their own preference changes. There is no insert, update or delete policy (nor grant).';

-- ------------------------------------------------------------- documents
create function app_private.notification_preference_document(p app_private.notification_preferences)
returns jsonb
language sql
immutable
security invoker
set search_path = ''
as $$
  select jsonb_build_object(
    'categories', p.categories,
    'quiet_hours', jsonb_build_object(
      'enabled', p.quiet_hours_enabled,
      'start', p.quiet_hours_start,
      'end', p.quiet_hours_end,
      'timezone', p.quiet_hours_timezone
    )
  )
$$;
comment on function app_private.notification_preference_document(app_private.notification_preferences) is
  'The preference document of a row as the API shows it ({categories, quiet_hours}), for the audit trail.';
revoke all on function app_private.notification_preference_document(app_private.notification_preferences) from public, anon, authenticated, service_role;

-- ------------------------------------------------------------- recording
-- Security definer: the writing user has (and must have) no INSERT on the
-- trail, and the device lookup goes by the caller's own session only.
create function app_private.record_notification_preference_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  claimed_session text := auth.jwt() ->> 'session_id';
  caller_session uuid;
  caller_device uuid;
begin
  if claimed_session ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' then
    caller_session := claimed_session::uuid;
    select d.id into caller_device
    from app_private.devices d
    where d.session_id = caller_session
      and d.user_id = new.user_id;
  end if;
  insert into app_private.notification_preference_audit
    (user_id, changed_at, device_id, session_id, old_version, new_version, old_document, new_document)
  values (
    new.user_id,
    new.updated_at,
    caller_device,
    caller_session,
    case when tg_op = 'UPDATE' then old.version end,
    new.version,
    case when tg_op = 'UPDATE' then app_private.notification_preference_document(old) end,
    app_private.notification_preference_document(new)
  );
  return null;
end
$$;
comment on function app_private.record_notification_preference_change() is
  'AFTER INSERT/UPDATE trigger of notification_preferences (security definer): appends the change to notification_preference_audit with the caller''s session and its bound device.';
revoke all on function app_private.record_notification_preference_change() from public, anon, authenticated, service_role;

create trigger notification_preferences_record_change
  after insert or update on app_private.notification_preferences
  for each row execute function app_private.record_notification_preference_change();

-- ---------------------------------------------------------- append-only
create function app_private.forbid_audit_rewrite()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  -- Erasure of a deleted user: the auth.users row is already gone when its
  -- on-delete-cascade reaches this table, so only that path passes.
  if tg_op = 'DELETE' and not exists (select 1 from auth.users u where u.id = old.user_id) then
    return old;
  end if;
  raise exception 'notification preference audit rows are append-only (% refused)', tg_op
    using errcode = '42501';
end
$$;
comment on function app_private.forbid_audit_rewrite() is
  'BEFORE UPDATE/DELETE/TRUNCATE trigger of notification_preference_audit: refuses every rewrite, for every role including the owner; lets through only the cascade that erases a deleted user''s rows.';
revoke all on function app_private.forbid_audit_rewrite() from public, anon, authenticated, service_role;

create trigger notification_preference_audit_append_only
  before update or delete on app_private.notification_preference_audit
  for each row execute function app_private.forbid_audit_rewrite();

create trigger notification_preference_audit_no_truncate
  before truncate on app_private.notification_preference_audit
  for each statement execute function app_private.forbid_audit_rewrite();
