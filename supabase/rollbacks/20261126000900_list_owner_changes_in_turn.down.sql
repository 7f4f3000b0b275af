-- Down step of 20261126000900_list_owner_changes_in_turn.sql: keep_a_list_owner()
-- as 20261122010100_sample_todo_app.sql made it (no lock before the check).
create or replace function app_private.keep_a_list_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_list uuid;
begin
  -- Account deletion (the cascade from auth.users) is no stepping down: a
  -- list left with no member at all goes with it (nobody could reach it).
  delete from public.lists l
   where l.id in (select o.list_id from old_rows o where not exists (select 1 from auth.users u where u.id = o.user_id))
     and not exists (select 1 from public.list_members m where m.list_id = l.id);
  select o.list_id into v_list
    from (select distinct o.list_id from old_rows o
           where o.role = 'owner' and exists (select 1 from auth.users u where u.id = o.user_id)) o
   where exists (select 1 from public.lists l where l.id = o.list_id)
     and not exists (select 1 from public.list_members m where m.list_id = o.list_id and m.role = 'owner')
   limit 1;
  if v_list is not null then
    raise exception 'a list must keep an owner: make another member owner first, or delete the list'
      using errcode = 'check_violation', constraint = 'list_members_keep_an_owner';
  end if;
  return null;
end;
$$;
comment on function app_private.keep_a_list_owner() is
  'Trigger (after update/delete on list_members, per statement): refuses to leave a list that still exists without an owner, except when the owner''s account is deleted (then a list left without members is deleted too). SECURITY DEFINER: it must see every member, not only the caller''s view.';
