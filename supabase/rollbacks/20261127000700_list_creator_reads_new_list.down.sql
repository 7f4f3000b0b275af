-- Down step of 20261127000700_list_creator_reads_new_list.sql: the select
-- policy of public.lists as before (members only), without the helper.
alter policy "Members can read their lists" on public.lists
  using (id in (select unnest(app_private.my_list_ids('viewer'))));
comment on policy "Members can read their lists" on public.lists is 'Every member (owner, editor, viewer) sees the list; nobody else knows it exists.';

drop function app_private.list_has_members(uuid);
