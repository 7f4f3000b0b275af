-- Down step of 20261126003500_hand_over_skips_soft_deleted_members.sql: the
-- hand-over as 20261122050000_account_deletion.sql left it (soft-deleted
-- members ranked like any other).

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
  -- viewer; members not themselves leaving come first. Lists with no other
  -- member go with the account (the keep_a_list_owner trigger).
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
comment on function app_private.hand_over_lists(p_user_id uuid) is 'Part of the purge: every list p_user_id is the only owner of and that has other members gets a new owner (the longest-standing editor, else viewer; members with no pending deletion first). Returns how many lists changed hands. Not callable by any API role.';
revoke execute on function app_private.hand_over_lists(p_user_id uuid) from public;
