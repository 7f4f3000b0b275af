-- What: the hand-over of a lost member's rows (app_private.pass_lost_members_rows_to_owner,
-- 20261128005700) (1) passes to the owner only as many of the member's live rows in the
-- list as fit in the owner's remaining quota, oldest first (sync_records.created_at); the
-- rest stay charged to the member, as before 005700, until the owner (or another member)
-- deletes them; several members handing to one owner in one statement share that room;
-- an owner at or above the quota takes none; and (2) locks the rows it hands over
-- (their sync state, app_private.sync_records, in (collection, id) order) before the two
-- users' usage rows, the order of every statement that writes such a row (the sync
-- trigger updates the row's sync state, then the usage rows), and never waits for one
-- while holding the other: when a usage row is taken (a transaction holding it may
-- write one of these rows next: a push locks the usage rows it announces at its
-- creates, then writes its edits), it lets the rows go, waits for the usage rows
-- without keeping them, and tries again. The quota error's detail names the rows one
-- left in a list whose owner had no room for them.
-- Why: (1) the hand-over was never bounded: an owner and a member looping "create up
-- to the quota, leave, be invited again" grew the owner's count without limit (two
-- accounts at 3, 6, 9, … with a quota of 3); an owner now takes none beyond the quota,
-- and the two hold at most twice the quota, as before 005700, while a member leaving a
-- list whose owner has room is freed of what they can no longer see. (2) The trigger
-- locked the usage rows, then updated the rows' sync state: Bob leaving Alice's list
-- while Alice's transaction edited Bob's task there (its sync state) and then created a
-- task (her usage row) deadlocked (40P01 "while locking tuple … in relation
-- sync_usage"). Taking the sync state first, then waiting for the usage rows, would
-- deadlock the other way: with a push that creates a task and deletes one of Bob's
-- (Bob's usage row locked at its create) and edits another of his.
-- What remains: the leave holds the list's row (FOR UPDATE) throughout, so a transaction
-- of several statements that writes the member's row and then adds a row to that list
-- still crosses it (40P01), as with 005700 (docs/sync.md, "Limits and their errors").
-- Cost: a usage row at 0 is made for an owner who has none (so that their count is
-- locked and read); one statement locking the handed rows' sync state, one more reading
-- the owner's room; a subtransaction per hand-over (two more, with a wait, per retry).
-- Tests: pgTAP 167-lost-members-rows-bounded-by-owner-quota, 166-lost-members-rows-pass-to-owner;
-- integration tests/integration/usage-lock-order.test.ts ("a member's loss of a list meets
-- a transaction writing the rows it hands over").
-- Rollback: supabase/rollbacks/20261128006800_lost_members_rows_bounded_and_locked_in_order.down.sql
-- (rows already handed stay the owner's, the others the member's: sync_records and sync_usage agree).

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
            detail = format('This write would bring the rows counted for you in synced tables to %s (those you created, also in lists you left whose owner had no room for them, and those former members left in your lists; rows members create in your lists count for them).', new.live_records),
            hint = 'Delete records you created before adding new ones; changing existing records is not limited.';
  end if;
  return new;
end;
$$;

create or replace function app_private.pass_lost_members_rows_to_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_leavers uuid[];
  v_lists uuid[];
  v_owners uuid[];
  v_usage_users uuid[];
  v_rows_held boolean;
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
  v_usage_users := array(select distinct u from unnest(v_leavers || v_owners) u order by u);
  -- An owner's room is read from their usage row, locked: one who has none yet gets it (at 0).
  insert into app_private.sync_usage (user_id, live_records)
  select distinct o, 0 from unnest(v_owners) o order by o
  on conflict (user_id) do nothing;

  -- The rows' sync state, then the usage rows: the order of a statement writing one of these
  -- rows (the sync trigger). A transaction may hold a usage row and write one of them in a
  -- later statement (a push: its announced usage rows at its creates, then its edits):
  -- waiting for its usage row while holding its row would close a cycle, so the rows are let
  -- go (the block rolled back), the usage rows waited for without keeping them, and both
  -- taken again.
  loop
    v_rows_held := false;
    begin
      perform from app_private.sync_records s
        join unnest(v_leavers, v_lists) as p(leaver, list_id) on s.created_by = p.leaver and s.scope_id = p.list_id
       where not s.deleted
       order by s.collection, s.id
         for no key update of s;
      v_rows_held := true;
      perform from app_private.sync_usage u where u.user_id = any (v_usage_users) order by u.user_id for no key update nowait;
      exit;
    exception when lock_not_available then
      if not v_rows_held then
        raise; -- lock_timeout while waiting for the rows: the statement's error, as anywhere
      end if;
      begin
        perform from app_private.sync_usage u where u.user_id = any (v_usage_users) order by u.user_id for no key update;
        raise exception using errcode = 'TSRLS'; -- lets them go
      exception when sqlstate 'TSRLS' then
        null;
      end;
    end;
  end loop;
  -- Held already; and those the transaction announced (a push deleting the membership).
  perform app_private.lock_sync_usage(v_usage_users);

  -- Each owner takes the oldest rows, as many as fit in their quota (all their leavers of the
  -- statement together); the others stay their creator's.
  with room as (
    select u.user_id as owner, greatest(0, app_private.max_live_records_per_user() - u.live_records) as n
      from app_private.sync_usage u
     where u.user_id = any (v_owners)
  ), ranked as (
    select s.collection, s.id, p.leaver, p.owner,
           row_number() over (partition by p.owner order by s.created_at, s.collection, s.id) as rank
      from unnest(v_leavers, v_lists, v_owners) as p(leaver, list_id, owner)
      join app_private.sync_records s on s.created_by = p.leaver and s.scope_id = p.list_id and not s.deleted
  ), handed as (
    update app_private.sync_records s
       set created_by = r.owner
      from ranked r join room on room.owner = r.owner
     where r.rank <= room.n and s.collection = r.collection and s.id = r.id
    returning r.leaver, r.owner
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
  -- Within the owner's quota, read above; handed_over still marks it as never refused.
  update app_private.sync_usage u
     set live_records = greatest(0, u.live_records + r.n), handed_over = r.n > 0
    from unnest(v_users, v_counts) as r(user_id, n)
   where u.user_id = r.user_id;
  return null;
end;
$$;
comment on function app_private.pass_lost_members_rows_to_owner() is
  'Trigger (after delete on public.list_members, per statement): the live rows a user who lost a list (removed, or leaving) created in it pass to the list''s longest-standing owner (those who can sign in first), oldest first, as many as fit in the owner''s quota (the rest stay the creator''s), in sync_records.created_by and in both users'' live-records usage. Locks the rows'' sync state, then the usage rows in user_id order (lock_sync_usage), never waiting for one while holding the other. Nothing passes for a list being deleted or an account being deleted. SECURITY DEFINER: a leaving viewer changes the owner''s usage.';
