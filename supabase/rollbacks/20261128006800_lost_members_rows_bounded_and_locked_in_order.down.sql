-- Down step of 20261128006800_lost_members_rows_bounded_and_locked_in_order: the
-- hand-over of a lost member's rows is 005700's again (every live row passes to the
-- owner, whatever their quota; usage rows locked before the rows' sync state), and so
-- is the quota error's detail. Rows already handed stay the owner's, the others the
-- member's (sync_records and sync_usage agree); usage rows made at 0 for owners stay.

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
