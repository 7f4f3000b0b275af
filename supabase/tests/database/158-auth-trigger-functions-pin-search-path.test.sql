-- Supabase Auth writes auth.* with search_path = auth (supabase/postgres'
-- 00000000000001-auth-schema.sql sets it on supabase_auth_admin), so a trigger
-- function on an auth table that resolves an unqualified name through the
-- caller's search_path finds nothing of ours, or GoTrue's own objects: every one
-- pins its search_path, whoever added it.
begin;
select plan(2);

select isnt_empty($$ select 1 from pg_trigger t join pg_class c on c.oid = t.tgrelid
                      where c.relnamespace = 'auth'::regnamespace and not t.tgisinternal $$,
  'there are triggers on auth tables to check');
select is_empty($$
  select format('%s on %s', t.tgfoid::regprocedure, t.tgrelid::regclass)
    from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_proc p on p.oid = t.tgfoid
   where c.relnamespace = 'auth'::regnamespace and not t.tgisinternal
     and not exists (select 1 from unnest(p.proconfig) as setting where setting like 'search\_path=%')
$$, 'every function a trigger on an auth table executes pins its search_path');

select * from finish();
rollback;
