-- Down step of 20261128000100_hand_over_cheap_per_deleted_user.sql:
-- pass_lists_to_successors() as 20261127002410 made it (planned per call, its
-- UPDATE run even when no list has a member who could take it over).

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
