-- Down step of 20261128009600_hand_over_once_per_bulk_delete.sql:
-- pass_lists_to_successors as 20261128009400_successors_outlive_the_statement.sql
-- made it (owners whose auth.users row is gone count as no owner), with its comment.

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
