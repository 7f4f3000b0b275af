-- Down step of 20261127002410_hand_over_past_soft_deleted_owners.sql:
-- pass_lists_to_successors() as 20261127002400 made it (a soft-deleted owner
-- counts as an owner).

CREATE OR REPLACE FUNCTION app_private.pass_lists_to_successors(p_lists uuid[], p_leaving uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  v_handed integer;
begin
  -- Each of p_lists left with no owner but p_leaving (null: nobody is
  -- leaving, the list has no owner) and with another member passes to one
  -- member: the longest-standing editor, else the longest-standing viewer;
  -- members with no deletion pending first, members Supabase Auth
  -- soft-deleted (who can never sign in to manage it) last.
  with owner_less as (
    select l.id as list_id
      from public.lists l
     where l.id = any (p_lists)
       and not exists (select 1 from public.list_members o
                        where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving)
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id
      from public.list_members m
      join owner_less s on s.list_id = m.list_id
     where m.user_id is distinct from p_leaving
     order by m.list_id,
              exists (select 1 from auth.users u where u.id = m.user_id and u.deleted_at is not null),
              exists (select 1 from app_private.account_deletion_requests r where r.user_id = m.user_id),
              m.role = 'editor' desc,
              m.created_at,
              m.user_id
  )
  update public.list_members m
     set role = 'owner'
    from successor s
   where m.list_id = s.list_id and m.user_id = s.user_id;
  get diagnostics v_handed = row_count;
  return v_handed;
end;
$function$;
comment on function app_private.pass_lists_to_successors(p_lists uuid[], p_leaving uuid) is 'The succession order of a list''s ownership, in one place: each of p_lists left with no owner but p_leaving (null: none) and with another member gets one new owner (the longest-standing editor, else viewer; members with no pending deletion first, members soft-deleted by Supabase Auth last). Returns how many lists changed hands. The caller locks the lists. Not callable by any API role.';

comment on function app_private.hand_over_lists(p_user_id uuid) is 'Part of the purge (and of the triggers on auth.users for a delete or a soft delete): every list p_user_id is the only owner of and that has other members gets a new owner (app_private.pass_lists_to_successors). Returns how many lists changed hands. Not callable by any API role.';
