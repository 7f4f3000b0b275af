-- Down step of 20261128010400_notification_preference_audit_bounded.sql: the
-- pruning trigger and its functions go, and the append-only trigger again
-- lets through only the erasure of a deleted user, as
-- 20261122020500_notification_preference_audit.sql made it. The trail grows
-- without bound again; the entries the bound deleted are not restored
-- (nothing keeps them).

drop trigger notification_preference_audit_bounded on app_private.notification_preference_audit;
drop function app_private.prune_notification_preference_audit();

create or replace function app_private.forbid_audit_rewrite()
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

drop function app_private.notification_preference_audit_oldest_kept(uuid);
drop function app_private.notification_preference_audit_kept();

comment on table app_private.notification_preference_audit is
  'Append-only trail of notification preference changes (one row per insert/update of notification_preferences). Readable by its user; nobody can update or delete rows (trigger), except the cascade that erases a deleted user.';
