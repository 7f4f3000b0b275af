-- What: the ownership hand-over passes a list to a member Supabase Auth
-- soft-deleted (auth.users.deleted_at set by auth.admin.deleteUser(id, true))
-- only when no other member is left. Before, such a member (who can never sign
-- in again) could be picked as the new owner by seniority, and the list had no
-- owner anyone could act as; a soft-deleted user stays a member until removed
-- (20261126002930), so this happened whenever one was the longest-standing
-- editor.
-- Test: supabase/tests/database/501-account-deletion-hand-over.test.sql.
-- Down step: supabase/rollbacks/20261126003500_hand_over_skips_soft_deleted_members.down.sql.

CREATE OR REPLACE FUNCTION app_private.hand_over_lists(p_user_id uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  v_handed integer;
begin
  -- Lock the user's lists in one order: two purges whose users share a list
  -- serialize here, so the second sees the first one's hand-over (and never
  -- deletes the member it just made owner without handing over again).
  perform 1 from public.lists l
   where l.id in (select m.list_id from public.list_members m where m.user_id = p_user_id)
   order by l.id
     for update;

  -- Lists where the user is the only owner and someone else is a member pass
  -- to one other member: the longest-standing editor, else the longest-standing
  -- viewer; members not themselves leaving come first, and members Supabase
  -- Auth soft-deleted (who can never sign in to manage it) last. Lists with no
  -- other member go with the account (the keep_a_list_owner trigger).
  with sole_owned as (
    select m.list_id
      from public.list_members m
     where m.user_id = p_user_id and m.role = 'owner'
       and not exists (select 1 from public.list_members o
                        where o.list_id = m.list_id and o.role = 'owner' and o.user_id <> p_user_id)
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id
      from public.list_members m
      join sole_owned s on s.list_id = m.list_id
     where m.user_id <> p_user_id
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
end
$function$;
comment on function app_private.hand_over_lists(p_user_id uuid) is 'Part of the purge (and of the triggers on auth.users for a delete or a soft delete): every list p_user_id is the only owner of and that has other members gets a new owner (the longest-standing editor, else viewer; members with no pending deletion first, members soft-deleted by Supabase Auth last). Returns how many lists changed hands. Not callable by any API role.';
revoke execute on function app_private.hand_over_lists(p_user_id uuid) from public;
