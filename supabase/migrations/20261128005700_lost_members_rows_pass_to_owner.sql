-- What: a member who loses a list (an owner removes them, or they leave it:
-- a delete of their public.list_members row) is no longer charged for the live
-- rows they created in it (the list row itself, its tasks): those rows pass to
-- the list's longest-standing owner (those who can sign in first, the order of
-- app_private.pass_lists_to_successors), in app_private.sync_records.created_by
-- and in both users' app_private.sync_usage, as a move out of the creator's
-- reach passes a row to its mover (20261128001550). The hand-over is never
-- refused for the quota: the owner may end above it (then they can delete,
-- not add, as after enable_sync); sync_usage gets a column handed_over that
-- only this update sets and the quota trigger resets before the row is
-- stored (a check keeps it false at rest; users never write sync_usage). The
-- two users' usage rows are locked in user_id order (lock_sync_usage). Not
-- handed: a demotion (a viewer still reads the list), a list's delete (its
-- cascade deletes the rows), an account's deletion (its rows count for no
-- one: forget_deleted_creators). Rows handed stay the owner's when the member
-- comes back. sync_records_created_by_idx becomes (created_by, scope_id, deleted):
-- the member's live rows in that list are found by the index, whatever else
-- the list holds (measured: docs/sync.md).
-- Why: a removed member's rows kept counting against their quota while they
-- could neither see nor delete them; at the quota every create of theirs was
-- refused with "delete some first", and an owner could do that to a member on
-- purpose. The quota error's detail said only rows you created count; it
-- now names the rows former members left in your lists too.
-- Tests: pgTAP 166-lost-members-rows-pass-to-owner; integration
-- tests/integration/usage-lock-order.test.ts, quota-moves.test.ts.
-- Rollback: supabase/rollbacks/20261128005700_lost_members_rows_pass_to_owner.down.sql
-- (rows already handed stay the owner's: sync_records and sync_usage agree).

create index sync_records_created_by_scope_idx on app_private.sync_records (created_by, scope_id, deleted);
comment on index app_private.sync_records_created_by_scope_idx is
  'The rows a user created: all of them at account deletion (app_private.forget_deleted_creators), the live ones in one scope when the user loses it (app_private.pass_lost_members_rows_to_owner; tombstones skipped).';
drop index app_private.sync_records_created_by_idx;

alter table app_private.sync_usage
  add column handed_over boolean not null default false,
  add constraint sync_usage_handed_over_transient check (not handed_over);
comment on table app_private.sync_usage is
  'Live rows counted for each user across all synced tables (the max_live_records_per_user quota): those they created or moved out of their creator''s reach, and those members who lost a list of theirs created there. Kept by the sync triggers.';
comment on column app_private.sync_usage.handed_over is
  'Always false once stored: true only in the write of app_private.pass_lost_members_rows_to_owner that charges this user for rows a member left in their list, which the quota trigger lets through and resets (such a hand-over is never refused).';

create or replace function app_private.refuse_live_records_over_quota()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_max integer;
begin
  if new.handed_over then
    new.handed_over := false;
    return new; -- rows a member left in a list of this user: a removal or a leave is never refused
  end if;
  if tg_op = 'UPDATE' and new.live_records <= old.live_records then
    return new; -- a delete (or nothing new): always allowed
  end if;
  v_max := app_private.max_live_records_per_user();
  -- current_setting('role') is the role the transaction set (SET ROLE / set_config, as PostgREST and the api
  -- function do), also inside the security definer sync trigger that writes this table.
  if new.live_records > v_max and current_setting('role') = 'authenticated' then
    raise exception 'at most % live records per user; delete some first', v_max
      using errcode = 'check_violation', constraint = 'max_live_records_per_user',
            schema = 'app_private', table = 'sync_usage',
            detail = format('This write would bring the rows counted for you in synced tables to %s (those you created, and those former members left in your lists; rows members create in your lists count for them).', new.live_records),
            hint = 'Delete records you created before adding new ones; changing existing records is not limited.';
  end if;
  return new;
end;
$$;
comment on function app_private.refuse_live_records_over_quota() is
  'Trigger of app_private.sync_usage: refuses (23514, constraint max_live_records_per_user) a write as authenticated that takes a user''s live records above app_private.max_live_records_per_user(). The owner and service_role are exempt (bulk imports); a decrease is always allowed, and so is the hand-over of rows a member left in the user''s list (handed_over, which it resets).';

create function app_private.pass_lost_members_rows_to_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_leavers uuid[];
  v_lists uuid[];
  v_owners uuid[];
  v_users uuid[];
  v_counts bigint[];
begin
  -- Each user who lost a list and created live rows there, with the owner who takes them.
  -- No owner left: the list is being deleted (its cascade), and its rows with it. A deleted
  -- account (the cascade from auth.users) hands nothing: its rows count for no one.
  select array_agg(p.user_id), array_agg(p.list_id), array_agg(p.owner)
    into v_leavers, v_lists, v_owners
    from (select o.user_id, o.list_id,
                 (select m.user_id from public.list_members m
                   where m.list_id = o.list_id and m.role = 'owner'
                   order by app_private.cannot_sign_in(m.user_id), m.created_at, m.user_id
                   limit 1) as owner
            from (select distinct o.user_id, o.list_id from old_rows o) o
           where exists (select 1 from app_private.sync_records s
                          where s.created_by = o.user_id and s.scope_id = o.list_id and not s.deleted)
             and exists (select 1 from auth.users u where u.id = o.user_id)) p
   where p.owner is not null;
  if v_leavers is null then
    return null;
  end if;
  -- The usage rows of both users first, in user_id order (as the sync trigger takes them).
  perform app_private.lock_sync_usage(v_leavers || v_owners);
  with handed as (
    update app_private.sync_records s
       set created_by = p.owner
      from unnest(v_leavers, v_lists, v_owners) as p(leaver, list_id, owner)
     where s.created_by = p.leaver and s.scope_id = p.list_id and not s.deleted
    returning p.leaver, p.owner
  )
  select array_agg(d.user_id order by d.user_id), array_agg(d.n order by d.user_id)
    into v_users, v_counts
    from (select x.user_id, sum(x.n) as n
            from (select h.leaver as user_id, -1 as n from handed h
                  union all
                  select h.owner, 1 from handed h) x
           group by x.user_id
          having sum(x.n) <> 0) d;
  -- One write per user (a user may both leave one list and own another of the statement).
  with changed as (
    update app_private.sync_usage u
       set live_records = greatest(0, u.live_records + r.n), handed_over = r.n > 0
      from unnest(v_users, v_counts) as r(user_id, n)
     where u.user_id = r.user_id
    returning u.user_id
  )
  insert into app_private.sync_usage as u (user_id, live_records, handed_over)
  select r.user_id, r.n, true
    from unnest(v_users, v_counts) as r(user_id, n)
   where r.n > 0 and r.user_id not in (select c.user_id from changed c)
  on conflict (user_id) do update set live_records = u.live_records + excluded.live_records, handed_over = true;
  return null;
end;
$$;
comment on function app_private.pass_lost_members_rows_to_owner() is
  'Trigger (after delete on public.list_members, per statement): the live rows a user who lost a list (removed, or leaving) created in it pass to the list''s longest-standing owner (those who can sign in first), in sync_records.created_by and in both users'' live-records usage, locked in user_id order (lock_sync_usage); never refused for the quota (sync_usage.handed_over). Nothing passes for a list being deleted or an account being deleted. SECURITY DEFINER: a leaving viewer changes the owner''s usage.';
revoke all on function app_private.pass_lost_members_rows_to_owner() from public, anon, authenticated, service_role;

-- Named to run after the triggers that lock the list (tidesync_track_access_losses: rows
-- entering it in transactions still running are counted first) and promote successors.
create trigger usage_passes_to_list_owner
  after delete on public.list_members
  referencing old table as old_rows
  for each statement execute function app_private.pass_lost_members_rows_to_owner();
comment on trigger usage_passes_to_list_owner on public.list_members is
  'A member who loses the list stops being charged for the rows they created in it: the list''s owner is (app_private.pass_lost_members_rows_to_owner).';
