-- What: app_private.pass_lists_to_successors (every hand-over: the trigger
-- before each deleted or soft-deleted user, the purge, the pass after a
-- delete's cascade) runs no statement when none of its lists has a member who
-- could take it over (not an owner, not the user leaving), and plans its
-- statements once per session instead of once per call
-- (plan_cache_mode = force_generic_plan). The succession order is unchanged.
-- Why: since 20261127002400 each deleted user's hand-over planned the
-- succession statement afresh (its list array made every custom plan look
-- cheaper than a generic one: ~0.25 ms of planning per call), and ran it even
-- for a user who shares no list: an UPDATE of no row, whose statement
-- triggers on list_members (keep_a_list_owner, and the delete of no list it
-- makes) still ran once per user. A bulk delete cost about twice as much per
-- user as on 9eb94a4 (npm run bench:bulk, 2,000 / 8,000 users: 0.705 / 0.693
-- ms per user against 0.371 / 0.397); in a scratch database, 4,000 users:
-- 0.66-0.70 ms per user, 0.28-0.29 with the hand-over trigger left out,
-- while the audit row, the installation-id queue and the pass after the
-- cascade each cost under 0.03 ms per user. A generic plan reads every table
-- by key (lists and list_members by list, auth.users and deletion requests
-- by user), whatever the number of lists; it also applies to the statement
-- triggers the hand-over's UPDATE fires, whose plans are made for reuse
-- anyway (tests/integration/sync-trigger-scale.test.ts).
-- tests/integration/hand-over-scale.test.ts (a bulk delete of users who share
-- no list runs no hand-over statement; the statement of a real hand-over is
-- planned once for all the deleted users); the succession order:
-- pgTAP 501-account-deletion-hand-over.
-- Rollback: supabase/rollbacks/20261128000100_hand_over_cheap_per_deleted_user.down.sql

create or replace function app_private.pass_lists_to_successors(p_lists uuid[], p_leaving uuid)
returns integer
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_handed integer;
begin
  -- Nobody who could take a list over (a user who shares none): no UPDATE at
  -- all, whose statement triggers would run even for no row.
  if not exists (select 1 from public.list_members m
                  where m.list_id = any (p_lists) and m.user_id is distinct from p_leaving and m.role <> 'owner') then
    return 0;
  end if;
  -- Each of p_lists left with no owner who can sign in but p_leaving (null:
  -- nobody is leaving) and with another member who is not an owner passes to
  -- one of them: the longest-standing editor, else the longest-standing
  -- viewer; members with no deletion pending first, members Supabase Auth
  -- soft-deleted (who can never sign in to manage it) last, and those only
  -- when the list has no owner at all.
  with owner_less as (
    select l.id as list_id,
           exists (select 1 from public.list_members o
                    where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving) as has_owner
      from public.lists l
     where l.id = any (p_lists)
       and not exists (select 1 from public.list_members o
                        where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving
                          and not exists (select 1 from auth.users u where u.id = o.user_id and u.deleted_at is not null))
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id, s.has_owner,
           exists (select 1 from auth.users u where u.id = m.user_id and u.deleted_at is not null) as soft_deleted
      from public.list_members m
      join owner_less s on s.list_id = m.list_id
     where m.user_id is distinct from p_leaving and m.role <> 'owner'
     order by m.list_id,
              soft_deleted,
              exists (select 1 from app_private.account_deletion_requests r where r.user_id = m.user_id),
              m.role = 'editor' desc,
              m.created_at,
              m.user_id
  )
  update public.list_members m
     set role = 'owner'
    from successor s
   where m.list_id = s.list_id and m.user_id = s.user_id
     and not (s.soft_deleted and s.has_owner);
  get diagnostics v_handed = row_count;
  return v_handed;
end;
$$;
