-- What: the hand-over (app_private.pass_lists_to_successors: the trigger before
-- each deleted or soft-deleted user, the purge, the pass after a delete's
-- cascade) passes over members whose auth.users row is gone: a statement
-- deleting several users has deleted them already, and their memberships go
-- in its cascade. Such a member is no successor, and such an owner no owner
-- who keeps the list. A list whose other members all go with the statement
-- has no successor: it goes with them, as a list with no other member does
-- (keep_a_list_owner, once the cascade has removed the last membership).
-- Why: an operator's `delete from auth.users where id in (A, B)` of two users
-- who are members of each other's personal lists failed with 23503 on
-- list_members_user_id_fkey: B's hand-over, before B's row went, made A (whose
-- row was already gone) the owner of B's list, and the UPDATE of a membership
-- written in the same transaction checks its foreign key. One written before
-- is not checked: A was made owner and removed again by the cascade, and B's
-- audit row counted a list handed over to a deleted user. Also a chain (A's
-- best successor B, B's C), and a member deleted in the same statement before
-- the only owner of their list.
-- The cost stays linear: one more primary-key probe of auth.users per member
-- of a list handed over (a bulk delete of users who share no list still runs
-- no hand-over statement: tests/integration/hand-over-scale.test.ts).
-- pgTAP 160-bulk-delete-successors-outlive-the-statement (mutual members, a
-- chain in both orders, an only other member, the purge of two such accounts),
-- 501-account-deletion-hand-over (the succession order).
-- Rollback: supabase/rollbacks/20261128009400_successors_outlive_the_statement.down.sql

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
  -- Users the statement has deleted already (no auth.users row: a bulk delete
  -- runs this before each row's delete and after its cascade) are leaving
  -- too: never a successor, never an owner who keeps the list.
  -- Nobody who could take a list over (a user who shares none): no UPDATE at
  -- all, whose statement triggers would run even for no row.
  if not exists (select 1 from public.list_members m
                  where m.list_id = any (p_lists) and m.user_id is distinct from p_leaving and m.role <> 'owner'
                    and exists (select 1 from auth.users u where u.id = m.user_id)) then
    return 0;
  end if;
  -- Each of p_lists left with no owner who can sign in but p_leaving (null:
  -- nobody is leaving) and with another member who is not an owner passes to
  -- one of them: the longest-standing editor, else the longest-standing
  -- viewer; members with no deletion pending first, members who cannot sign
  -- in (app_private.cannot_sign_in: soft-deleted or banned) last, and those
  -- only when the list has no owner at all.
  with owner_less as (
    select l.id as list_id,
           exists (select 1 from public.list_members o
                    where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving
                      and exists (select 1 from auth.users u where u.id = o.user_id)) as has_owner
      from public.lists l
     where l.id = any (p_lists)
       and not exists (select 1 from public.list_members o
                        where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving
                          and exists (select 1 from auth.users u where u.id = o.user_id)
                          and not app_private.cannot_sign_in(o.user_id))
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id, s.has_owner,
           app_private.cannot_sign_in(m.user_id) as shut_out
      from public.list_members m
      join owner_less s on s.list_id = m.list_id
     where m.user_id is distinct from p_leaving and m.role <> 'owner'
       and exists (select 1 from auth.users u where u.id = m.user_id)
     order by m.list_id,
              shut_out,
              exists (select 1 from app_private.account_deletion_requests r where r.user_id = m.user_id),
              m.role = 'editor' desc,
              m.created_at,
              m.user_id
  )
  update public.list_members m
     set role = 'owner'
    from successor s
   where m.list_id = s.list_id and m.user_id = s.user_id
     and not (s.shut_out and s.has_owner);
  get diagnostics v_handed = row_count;
  return v_handed;
end;
$$;
comment on function app_private.pass_lists_to_successors(uuid[], uuid) is
  'The succession order of a list''s ownership, in one place: each of p_lists left with no owner who can sign in (app_private.cannot_sign_in: soft-deleted and banned owners do not count) but p_leaving (null: none) and with another member gets one new owner (the longest-standing editor, else viewer; members with no pending deletion first, members who cannot sign in last and only when the list has no owner at all). Members whose auth.users row is gone (deleted by the same statement, their memberships going in its cascade) are leaving too: neither successors nor owners who keep a list. Returns how many lists changed hands. The caller locks the lists. Not callable by any API role.';
