-- Down step of 20261126000400_my_list_ids_cached_plan.sql: my_list_ids as
-- 20261122010100_sample_todo_app.sql made it (a SQL function).
create or replace function app_private.my_list_ids(p_min_role text default 'viewer')
returns uuid[]
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(array_agg(m.list_id), '{}')
    from public.list_members m
   where m.user_id = (select auth.uid())
     and case p_min_role
           when 'owner' then m.role = 'owner'
           when 'editor' then m.role in ('owner', 'editor')
           else true
         end
$$;
