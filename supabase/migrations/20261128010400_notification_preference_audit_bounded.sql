-- What: a user's notification preference audit trail keeps their newest
-- app_private.notification_preference_audit_kept() (1,000) entries. A trigger
-- after each insert into app_private.notification_preference_audit
-- (prune_notification_preference_audit, security definer) deletes that user's
-- entries older than the oldest kept (notification_preference_audit_oldest_kept),
-- in the transaction of the change. The append-only trigger
-- (forbid_audit_rewrite) lets exactly those deletes through, besides the
-- erasure of a deleted user: a delete of an entry among its user's newest
-- 1,000, every update and a truncate are still refused, for every role. The
-- trails already longer are cut to the bound here.
-- Why: the trail grew by a row (~0.9 kB) for every change, forever; the rate
-- limit lets a user make 120 a minute, ~156 MB a day, and the account export
-- streams the whole trail under its 5-minute cap, so a long trail could make a
-- user's export never finish. 1,000 entries is years of ordinary use (a few
-- changes a month) and under 1 MB, and every history page and export reads it.
-- Not done: two inserts for one user in concurrent transactions may leave
-- 1,001 entries until the next one (neither sees the other's row); the API's
-- writes of one user run in turn (the PUT locks the preferences row). The
-- bound is not published in GET /v1/meta. The cut below goes through the
-- append-only trigger like any pruning, about 0.1 ms an entry (200,000
-- entries of one user: 20 s on a laptop).
-- Tests: pgTAP 175-notification-preference-audit-bounded (and 303, the rest of
-- the append-only rule); tests/integration/notification-history-bounded.test.ts
-- (the history's pages across pruning).
-- Down step: supabase/rollbacks/20261128010400_notification_preference_audit_bounded.down.sql

create function app_private.notification_preference_audit_kept()
returns integer
language sql
immutable
parallel safe
set search_path = ''
as $$ select 1000 $$;
comment on function app_private.notification_preference_audit_kept() is
  'How many notification preference audit entries a user keeps (their newest); a change that appends one more deletes the oldest (prune_notification_preference_audit). docs/retention.md, docs/notification-preferences.md. Change it by replacing this function in a migration.';
revoke all on function app_private.notification_preference_audit_kept() from public, anon, authenticated, service_role;

create function app_private.notification_preference_audit_oldest_kept(p_user_id uuid)
returns bigint
language sql
stable
set search_path = ''
as $$
  -- The user's notification_preference_audit_kept()-th newest entry (primary
  -- key order, newest first); null while they have fewer.
  select a.id
    from app_private.notification_preference_audit a
   where a.user_id = p_user_id
   order by a.id desc
  offset app_private.notification_preference_audit_kept() - 1
   limit 1
$$;
comment on function app_private.notification_preference_audit_oldest_kept(p_user_id uuid) is
  'The id of the oldest notification preference audit entry of p_user_id the bound keeps (their notification_preference_audit_kept()-th newest), null while they have fewer: the one rule of which entries prune_notification_preference_audit deletes and forbid_audit_rewrite lets go. Not callable by any API role.';
revoke all on function app_private.notification_preference_audit_oldest_kept(uuid) from public, anon, authenticated, service_role;

create or replace function app_private.forbid_audit_rewrite()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'DELETE' then
    -- Erasure of a deleted user: the auth.users row is already gone when its
    -- on-delete-cascade reaches this table.
    if not exists (select 1 from auth.users u where u.id = old.user_id) then
      return old;
    end if;
    -- The bound: an entry older than the oldest its user keeps (the rows
    -- prune_notification_preference_audit deletes). The newest ones, which
    -- such a delete never takes, are still there to count.
    if old.id < app_private.notification_preference_audit_oldest_kept(old.user_id) then
      return old;
    end if;
  end if;
  raise exception 'notification preference audit rows are append-only (% refused)', tg_op
    using errcode = '42501';
end
$$;
comment on function app_private.forbid_audit_rewrite() is
  'BEFORE UPDATE/DELETE/TRUNCATE trigger of notification_preference_audit: refuses every rewrite, for every role including the owner; lets through only the cascade that erases a deleted user''s rows and the delete of a user''s entries older than the newest notification_preference_audit_kept() (the bound, prune_notification_preference_audit).';

create function app_private.prune_notification_preference_audit()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- One user's changes run in turn (the PUT locks their preferences row), so
  -- two never prune the same entries at once.
  delete from app_private.notification_preference_audit a
   where a.user_id = new.user_id
     and a.id < app_private.notification_preference_audit_oldest_kept(new.user_id);
  return null;
end;
$$;
comment on function app_private.prune_notification_preference_audit() is
  'Trigger (after insert on app_private.notification_preference_audit, per row): deletes the user''s entries older than their newest notification_preference_audit_kept() (1,000), in the transaction of the change. SECURITY DEFINER: the bound holds whoever inserts, and no API role may delete audit rows. Not callable by any API role.';
revoke all on function app_private.prune_notification_preference_audit() from public, anon, authenticated, service_role;

create trigger notification_preference_audit_bounded
  after insert on app_private.notification_preference_audit
  for each row execute function app_private.prune_notification_preference_audit();
comment on trigger notification_preference_audit_bounded on app_private.notification_preference_audit is
  'A user keeps their newest app_private.notification_preference_audit_kept() entries, however an entry is inserted (prune_notification_preference_audit).';

comment on table app_private.notification_preference_audit is
  'Append-only trail of notification preference changes (one row per insert/update of notification_preferences), the newest notification_preference_audit_kept() (1,000) of each user. Readable by its user; nobody can update or delete rows (trigger), except the cascade that erases a deleted user and the pruning of entries beyond the bound.';

-- The trails already longer than the bound, cut to it (what their next change would delete).
delete from app_private.notification_preference_audit a
 using (select t.user_id, app_private.notification_preference_audit_oldest_kept(t.user_id) as oldest_kept
          from app_private.notification_preference_audit t
         group by t.user_id
        having count(*) > app_private.notification_preference_audit_kept()) k
 where a.user_id = k.user_id
   and a.id < k.oldest_kept;
