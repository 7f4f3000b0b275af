-- app_private.sync_apply on column kinds the sample app does not have, in a
-- synced table made here (rolled back): the push writes what the same write in
-- SQL as `authenticated` writes, and the database stays the last word per row.
--   - a NOT NULL domain column with a default (`label apply_nonblank default
--     'unnamed'`): a create without it gets the default, an update that does
--     not touch it keeps it (migration 20261126002000: only the named columns
--     are read from the rows); a null or '' written to it is still refused.
begin;
select plan(14);

select from tests.create_supabase_user('kinds_owner');

create domain public.apply_nonblank as text not null check (value <> '');
create domain public.apply_code as public.apply_nonblank check (char_length(value) <= 5);
create table public.apply_kinds (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade,
  label public.apply_nonblank default 'unnamed',
  code public.apply_code default 'c',
  note text
);
create index on public.apply_kinds (list_id);
alter table public.apply_kinds enable row level security;
revoke all on public.apply_kinds from public, anon, authenticated, service_role;
grant select, delete on public.apply_kinds to authenticated;
grant insert (id, list_id, label, code, note), update (list_id, label, code, note) on public.apply_kinds to authenticated;
create policy "Members can read kinds" on public.apply_kinds for select to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('viewer'))));
create policy "Editors can add kinds" on public.apply_kinds for insert to authenticated
  with check (list_id in (select unnest(app_private.my_list_ids('editor'))));
create policy "Editors can change kinds" on public.apply_kinds for update to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('editor')))) with check (list_id in (select unnest(app_private.my_list_ids('editor'))));
create policy "Editors can delete kinds" on public.apply_kinds for delete to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('editor'))));
select app_private.enable_sync('public.apply_kinds', 'list_id');

select tests.authenticate_as('kinds_owner');
insert into public.lists (id, title) values ('a3000000-0000-4000-8000-000000000001', 'Kinds');
-- What SQL as the caller accepts: a create without the domain column, an update without it.
insert into public.apply_kinds (id, list_id, note) values ('a3000000-0000-4000-8000-0000000000a1', 'a3000000-0000-4000-8000-000000000001', 'by sql');
update public.apply_kinds set note = 'by sql, edited' where id = 'a3000000-0000-4000-8000-0000000000a1';

-- ------------------------------------------------------------ a NOT NULL domain column the rows leave out
select is(app_private.sync_apply($$[
  {"collection": "apply_kinds", "kind": "insert", "columns": ["list_id", "note"], "rows": [
    {"id": "a3000000-0000-4000-8000-0000000000b1", "list_id": "a3000000-0000-4000-8000-000000000001", "note": "pushed"}]}
]$$), '{"failed": []}'::jsonb, 'a create without the NOT NULL domain column is written');
select results_eq($$ select label::text, code::text, note from public.apply_kinds where id = 'a3000000-0000-4000-8000-0000000000b1' $$,
  $$ values ('unnamed'::text, 'c'::text, 'pushed'::text) $$, 'the columns it leaves out get their defaults');

select is(app_private.sync_apply($$[
  {"collection": "apply_kinds", "kind": "update", "columns": ["note"], "rows": [
    {"id": "a3000000-0000-4000-8000-0000000000a1", "note": "pushed edit"}]}
]$$), '{"failed": []}'::jsonb, 'an update that does not touch the NOT NULL domain column is written');
select is(app_private.sync_apply($$[
  {"collection": "apply_kinds", "kind": "update", "columns": ["code", "label", "note"], "rows": [
    {"id": "a3000000-0000-4000-8000-0000000000a1", "note": "mixed"},
    {"id": "a3000000-0000-4000-8000-0000000000b1", "label": "named", "code": "xy"}]}
]$$), '{"failed": []}'::jsonb, 'an update group whose rows touch the domain columns or not is written');
select results_eq($$ select label::text, code::text, note from public.apply_kinds where id::text like 'a3000000-0000-4000-8000-0000000000_1' order by id $$,
  $$ values ('unnamed'::text, 'c'::text, 'mixed'::text), ('named', 'xy', 'pushed') $$,
  'each row gets the columns it carries; the domain columns it leaves out keep their values');
select results_eq($$ select (select array_agg(k order by k) from jsonb_object_keys(s.field_versions) k) from app_private.sync_records s
                     where s.collection = 'apply_kinds' and s.id = 'a3000000-0000-4000-8000-0000000000b1' $$,
  $$ values (array['*', 'code', 'label']) $$, 'a new field version only for the columns the row changed');

-- The domains still check every value written.
select is((select jsonb_agg(jsonb_build_array(f ->> 'id', f ->> 'sqlstate', f ->> 'constraint')) from jsonb_array_elements(app_private.sync_apply($$[
  {"collection": "apply_kinds", "kind": "update", "columns": ["code", "label"], "rows": [
    {"id": "a3000000-0000-4000-8000-0000000000a1", "label": null},
    {"id": "a3000000-0000-4000-8000-0000000000b1", "code": "toolong"}]}
]$$) -> 'failed') f),
  '[["a3000000-0000-4000-8000-0000000000a1", "23502", null], ["a3000000-0000-4000-8000-0000000000b1", "23514", "apply_code_check"]]'::jsonb,
  'a null written to the NOT NULL domain, and a value its CHECK refuses (a domain over the domain), are refused');
select is((app_private.sync_apply($$[
  {"collection": "apply_kinds", "kind": "insert", "columns": ["label", "list_id"], "rows": [
    {"id": "a3000000-0000-4000-8000-0000000000b2", "list_id": "a3000000-0000-4000-8000-000000000001", "label": ""}]}
]$$) -> 'failed' -> 0 ->> 'constraint'), 'apply_nonblank_check', 'a create with a value the domain refuses is refused');
select results_eq($$ select label::text, code::text from public.apply_kinds where id::text like 'a3000000-0000-4000-8000-0000000000_1' order by id $$,
  $$ values ('unnamed'::text, 'c'::text), ('named', 'xy') $$, 'and nothing of the refused rows is written');
select tests.clear_authentication();

-- ------------------------------------------------------------ the builders it reads the rows with
select is(app_private.sync_record_columns('public.apply_kinds', array['note', 'code', 'nope', 'label']),
  'id uuid, note text, code text, label text', 'the column list names the rows'' columns, a domain as its base type');
select is(tests.function_callers('app_private.sync_record_columns(regclass, text[])'), array['authenticated'], 'sync_record_columns (text for sync_apply): authenticated only');
select is(tests.function_callers('app_private.sync_insert_sql(regclass, text[])'), array['authenticated'], 'sync_insert_sql (text for sync_apply): authenticated only');
select is(tests.function_callers('app_private.sync_base_type(oid, integer)'), array['authenticated'], 'sync_base_type (text for sync_apply): authenticated only');
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
   where p.oid in ('app_private.sync_record_columns(regclass, text[])'::regprocedure, 'app_private.sync_insert_sql(regclass, text[])'::regprocedure,
                   'app_private.sync_base_type(oid, integer)'::regprocedure, 'app_private.sync_update_sql(regclass, text[])'::regprocedure)
     and (p.prosecdef or p.proconfig is null or not 'search_path=""' = any (p.proconfig)) $$,
  'the builders are SECURITY INVOKER with an empty search_path');

select * from finish();
rollback;
