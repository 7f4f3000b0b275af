-- What: app_private.my_list_ids() becomes PL/pgSQL with the same query, the
-- same answers, signature, security (definer, search_path '') and grants.
-- Why: the sample app's policies call it once per statement (an initplan), and
-- the sync policies through app_private.visible_scope_ids(). A SQL function
-- that cannot be inlined (SECURITY DEFINER, SET search_path) parses and plans
-- its query again on every call in Postgres 15; PL/pgSQL keeps the plan for
-- the session. A push runs several such statements (locks, reads, write,
-- read-back), a pull page three (docs/performance.md).
-- Rollback: supabase/rollbacks/20261126000400_my_list_ids_cached_plan.down.sql

create or replace function app_private.my_list_ids(p_min_role text default 'viewer')
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (
    select coalesce(array_agg(m.list_id), '{}')
      from public.list_members m
     where m.user_id = (select auth.uid())
       and case p_min_role
             when 'owner' then m.role = 'owner'
             when 'editor' then m.role in ('owner', 'editor')
             else true
           end);
end;
$$;
