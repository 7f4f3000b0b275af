-- What: a list is handed over when no owner who can sign in is left: an owner
-- Supabase Auth soft-deleted (auth.users.deleted_at set) no longer counts as
-- one (app_private.pass_lists_to_successors, used by every hand-over). The new
-- owner is the best member who is not an owner yet, by the same order; a
-- soft-deleted member is made owner only when the list has no owner at all.
-- Why: owner A and co-owner B, B soft-deleted, then A deleted (by the purge or
-- directly) or soft-deleted too: the hand-over saw B as another owner and
-- passed nothing, so the list's only owner could never sign in and the member
-- who could stayed a viewer; nobody could manage, share or delete it again.
-- pgTAP 501-account-deletion-hand-over (a soft-deleted co-owner: the owner
-- purged, deleted directly, soft-deleted too).
-- Rollback: supabase/rollbacks/20261127002410_hand_over_past_soft_deleted_owners.down.sql

create or replace function app_private.pass_lists_to_successors(p_lists uuid[], p_leaving uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_handed integer;
begin
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
comment on function app_private.pass_lists_to_successors(uuid[], uuid) is
  'The succession order of a list''s ownership, in one place: each of p_lists left with no owner who can sign in (soft-deleted owners do not count) but p_leaving (null: none) and with another member gets one new owner (the longest-standing editor, else viewer; members with no pending deletion first, members soft-deleted by Supabase Auth last and only when the list has no owner at all). Returns how many lists changed hands. The caller locks the lists. Not callable by any API role.';
comment on function app_private.hand_over_lists(p_user_id uuid) is 'Part of the purge (and of the triggers on auth.users for a delete or a soft delete): every list p_user_id is the only owner of who can sign in (an owner soft-deleted by Supabase Auth does not count) and that has other members gets a new owner (app_private.pass_lists_to_successors). Returns how many lists changed hands. Not callable by any API role.';
