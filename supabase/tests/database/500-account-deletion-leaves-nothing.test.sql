-- After the purge, nothing anywhere references a deleted user. Written over
-- the catalog, so it covers every table a later migration adds:
--   * every foreign key to auth.users is walked, first to prove the user had
--     data behind each of them (a new table without fixture data fails here),
--     then to prove none of them still holds the user's id;
--   * every uuid, text, varchar and json(b) column of every table in every
--     schema (auth included, Postgres' own and the pgTAP helpers excluded) is
--     searched for the id: user-id columns without a foreign key
--     (auth.refresh_tokens.user_id) and ids inside documents count too;
--   * the same search for her phone's installation id and for the ids of her
--     device rows, which the sync state stamped on what she wrote
--     (field_versions' "d"); on a tablet she shared, what Bob wrote stays
--     stamped with his device row.
--   The one exception: her id itself stays in app_private.retired_user_ids,
--   with nothing else, so that nobody takes her personal list's id.
-- The purge runs as the migration owner (hosted `postgres`), not a superuser.
begin;
select plan(13);

select from tests.create_supabase_user('gone_alice');
select from tests.create_supabase_user('gone_bob');
select from tests.create_supabase_user('gone_carol');

create temporary table gone (user_id uuid) on commit drop;
insert into gone select tests.get_supabase_uid('gone_alice');
grant select on gone to public;

-- Every foreign key column to auth.users (single-column keys: all of ours and Supabase's are).
create temporary view user_fk_columns as
select n.nspname as schema_name, c.relname as table_name, a.attname as column_name
  from pg_catalog.pg_constraint k
  join pg_catalog.pg_class c on c.oid = k.conrelid
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  join pg_catalog.pg_attribute a on a.attrelid = k.conrelid and a.attnum = k.conkey[1]
 where k.contype = 'f' and k.confrelid = 'auth.users'::regclass and array_length(k.conkey, 1) = 1;

-- Every column that could hold a user id, as text.
create temporary view searchable_columns as
select n.nspname as schema_name, c.relname as table_name, a.attname as column_name
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
 where c.relkind in ('r', 'p')
   and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'tests')
   and n.nspname not like 'pg\_temp%' and n.nspname not like 'pg\_toast%'
   and a.atttypid in ('uuid'::regtype, 'text'::regtype, 'varchar'::regtype, 'json'::regtype, 'jsonb'::regtype, 'uuid[]'::regtype, 'text[]'::regtype);

-- "schema.table.column: n" for each column holding the gone user's id (equal, or inside the text).
create function pg_temp.columns_holding(p_user uuid, p_fk_only boolean)
returns setof text
language plpgsql
as $$
declare
  v record;
  v_count bigint;
begin
  for v in
    select * from user_fk_columns where p_fk_only
    union all
    select * from searchable_columns where not p_fk_only
    order by 1, 2, 3
  loop
    execute format('select count(*) from %I.%I where %I::text like ''%%'' || $1::text || ''%%''', v.schema_name, v.table_name, v.column_name)
      into v_count using p_user;
    if v_count > 0 then
      return next format('%s.%s.%s: %s', v.schema_name, v.table_name, v.column_name, v_count);
    end if;
  end loop;
end
$$;

-- ------------------------------------------------------------ Alice's data, everywhere
select tests.authenticate_as('gone_alice');
insert into public.lists (id, title) values
  ('a5000000-0000-4000-8000-000000000001', 'Shared with Bob'),
  ('a5000000-0000-4000-8000-000000000002', 'Private');
insert into public.tasks (id, list_id, title) values
  ('a5000000-0000-4000-8000-000000000011', 'a5000000-0000-4000-8000-000000000001', 'Alice''s task in the shared list'),
  ('a5000000-0000-4000-8000-000000000012', 'a5000000-0000-4000-8000-000000000002', 'Alice''s private task'),
  ('a5000000-0000-4000-8000-000000000013', tests.get_supabase_uid('gone_alice'), 'In the personal list');
delete from public.tasks where id = 'a5000000-0000-4000-8000-000000000012';  -- a tombstone too
select from public.create_list_invite('a5000000-0000-4000-8000-000000000002', 'viewer');  -- an open invite she created
create temporary table codes (code text) on commit drop;
grant all on codes to public;
insert into codes select public.create_list_invite('a5000000-0000-4000-8000-000000000001', 'editor');

select tests.authenticate_as('gone_bob');
select from public.accept_list_invite((select code from codes));
insert into public.tasks (id, list_id, title) values ('a5000000-0000-4000-8000-000000000021', 'a5000000-0000-4000-8000-000000000001', 'Bob''s task');
insert into public.lists (id, title) values ('a5000000-0000-4000-8000-000000000003', 'Bob''s list');
delete from codes;
insert into codes select public.create_list_invite('a5000000-0000-4000-8000-000000000003', 'viewer');

select tests.authenticate_as('gone_alice');
select from public.accept_list_invite((select code from codes));  -- an invite she used (used_by)

select tests.clear_authentication();
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, push_token, push_provider, session_id, last_seen_at)
values ('a5000000-0000-4000-8000-000000000061', tests.get_supabase_uid('gone_alice'), 'a5000000-0000-4000-8000-000000000031', 'ios', '1.0.0', 1, 'apns-alice', 'apns',
        tests.get_session_id('gone_alice'), now());
-- Her phone, and a tablet she shares with Bob (both signed in on it).
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
values ('a5000000-0000-4000-8000-000000000063', tests.get_supabase_uid('gone_alice'), 'a5000000-0000-4000-8000-000000000033', 'ios', '1.0.0', 1, now(), now()),
       ('a5000000-0000-4000-8000-000000000064', tests.get_supabase_uid('gone_bob'), 'a5000000-0000-4000-8000-000000000033', 'ios', '1.0.0', 1, now(), now());
-- What her devices pushed, stamped by the sync triggers with the device row
-- (as the push sets it): an edit of her task and of Bob's in the shared list,
-- a task she deleted there (a tombstone), one from the shared tablet; and
-- Bob's edit from that tablet.
select tests.authenticate_as('gone_alice');
select from set_config('tidesync.device_id', 'a5000000-0000-4000-8000-000000000061', true);
update public.tasks set title = 'Alice''s task, edited on her phone' where id = 'a5000000-0000-4000-8000-000000000011';
update public.tasks set title = 'Bob''s task, edited on Alice''s phone' where id = 'a5000000-0000-4000-8000-000000000021';
insert into public.tasks (id, list_id, title) values ('a5000000-0000-4000-8000-000000000014', 'a5000000-0000-4000-8000-000000000001', 'Gone soon');
delete from public.tasks where id = 'a5000000-0000-4000-8000-000000000014';
select from set_config('tidesync.device_id', 'a5000000-0000-4000-8000-000000000063', true);
update public.tasks set done = true where id = 'a5000000-0000-4000-8000-000000000021';
select tests.authenticate_as('gone_bob');
select from set_config('tidesync.device_id', 'a5000000-0000-4000-8000-000000000064', true);
update public.tasks set position = 1 where id = 'a5000000-0000-4000-8000-000000000021';
select from set_config('tidesync.device_id', '', true);
select tests.clear_authentication();
-- A beta tester with feedback on a build (test-build distribution).
insert into app_private.tester_groups (id, name) values ('a5000000-0000-4000-8000-000000000051', 'Testers of the deletion test');
insert into app_private.tester_group_channels (group_id, channel) values ('a5000000-0000-4000-8000-000000000051', 'beta-500');
insert into app_private.tester_group_members (group_id, user_id) values ('a5000000-0000-4000-8000-000000000051', tests.get_supabase_uid('gone_alice'));
insert into app_private.releases (id, platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size)
values ('a5000000-0000-4000-8000-000000000052', 'ios', 'beta-500', 'binary', '1.0.0', 1, 'ios/beta-500/1.ipa', repeat('a', 64), 1);
insert into app_private.release_feedback (release_id, user_id, device_id, platform, build_number, body)
select 'a5000000-0000-4000-8000-000000000052', tests.get_supabase_uid('gone_alice'), d.id, 'ios', 1, 'Alice''s feedback'
  from app_private.devices d where d.user_id = tests.get_supabase_uid('gone_alice');
insert into app_private.notification_preferences (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
select tests.get_supabase_uid('gone_alice'),
       '{"security": {"push": true, "email": false, "in_app": false}, "sync_conflicts": {"push": true, "email": false, "in_app": true},
         "reminders": {"push": false, "email": false, "in_app": false}, "product_updates": {"push": false, "email": false, "in_app": true}}'::jsonb,
       false, '22:00', '07:00', 'Europe/London';
insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, session_id) values
  ('00000000-0000-0000-0000-000000000000', 'alice-refresh-1', tests.get_supabase_uid('gone_alice')::text, false, now(), now(), tests.get_session_id('gone_alice')),
  ('00000000-0000-0000-0000-000000000000', 'alice-refresh-orphan', tests.get_supabase_uid('gone_alice')::text, true, now(), now(), null);
-- Her email identity, as Supabase Auth links one (provider_id = the user's id).
insert into auth.identities (provider_id, user_id, identity_data, provider, created_at) values
  (tests.get_supabase_uid('gone_alice')::text, tests.get_supabase_uid('gone_alice'),
   jsonb_build_object('sub', tests.get_supabase_uid('gone_alice')::text), 'email', now());
-- Her TOTP factor, as Supabase Auth enrolls one.
insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret) values
  (gen_random_uuid(), tests.get_supabase_uid('gone_alice'), 'Alice''s phone', 'totp', 'verified', now(), now(), 'alice-totp-secret');
insert into app_private.sync_ops (user_id, op_id, device_id, record_id, collection, type, status, version)
values (tests.get_supabase_uid('gone_alice'), 'a5000000-0000-4000-8000-000000000041', 'a5000000-0000-4000-8000-000000000031',
        'a5000000-0000-4000-8000-000000000011', 'tasks', 'upsert', 'applied', 1);
select from app_private.hit_rate_limit(tests.get_supabase_uid('gone_alice'), 'sync.pull', 60);
update public.profiles set display_name = 'Alice Gone' where id = tests.get_supabase_uid('gone_alice');

select tests.authenticate_as('gone_alice');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();

select is_empty($$ select schema_name || '.' || table_name || '.' || column_name from user_fk_columns f
                  where not exists (select 1 from pg_temp.columns_holding((select user_id from gone), true) h
                                     where h like f.schema_name || '.' || f.table_name || '.' || f.column_name || ':%') $$,
  'before the purge the user has data behind every foreign key to auth.users (the fixture covers every table)');
select is((select count(*)::int from app_private.sync_records
            where field_versions::text like '%a5000000-0000-4000-8000-000000000061%'), 3,
  'before the purge her phone''s device is in the sync state of three rows of the shared list');
select ok((select count(*) from user_fk_columns) >= 15, 'the walk sees the foreign keys of every migration (it is not vacuous)');

-- ------------------------------------------------------------ the purge, as the owner
select is((select rolsuper from pg_roles where oid = (select nspowner from pg_namespace where nspname = 'app_private')), false,
  'the migration owner that runs the purge is not a superuser');
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select results_eq($$ select users_deleted, lists_handed_over from app_private.run_account_deletions(now() + interval '8 days') $$,
  $$ values (1, 1) $$, 'the purge, run by the owner after the grace period, deletes the user and hands over the shared list');
select tests.clear_authentication();

select is_empty($$ select * from pg_temp.columns_holding((select user_id from gone), true) $$,
  'no foreign key to auth.users references the deleted user any more');
select is_empty($$ select * from pg_temp.columns_holding((select user_id from gone), false)
                  except select 'app_private.retired_user_ids.user_id: 1' $$,
  'no uuid, text or json column of any table in any schema (auth included) holds the deleted user''s id, but for its reservation');
select is((select array_agg(attname::text order by attnum) from pg_catalog.pg_attribute
            where attrelid = 'app_private.retired_user_ids'::regclass and attnum > 0 and not attisdropped),
  array['user_id'], 'the reservation of her id as a list id is the id alone: nothing links it to anything (migration 20261128004650)');

select is_empty($$ select * from pg_temp.columns_holding('a5000000-0000-4000-8000-000000000031', false)
                  union all select * from pg_temp.columns_holding('a5000000-0000-4000-8000-000000000061', false)
                  union all select * from pg_temp.columns_holding('a5000000-0000-4000-8000-000000000063', false) $$,
  'no column of any table in any schema holds her phone''s installation id or her devices'' ids (the sync state''s "d" is null)');
select is((select array[field_versions -> 'done' ->> 'd', field_versions -> 'position' ->> 'd']
             from app_private.sync_records where id = 'a5000000-0000-4000-8000-000000000021'),
  array[null, 'a5000000-0000-4000-8000-000000000064'],
  'on the tablet she shared with Bob, her write is forgotten and his stays his: a stamp names one user''s device');

select results_eq($$ select id, title, created_by from public.tasks where list_id = 'a5000000-0000-4000-8000-000000000001' order by id $$,
  $$ values ('a5000000-0000-4000-8000-000000000011'::uuid, 'Alice''s task, edited on her phone', null::uuid),
            ('a5000000-0000-4000-8000-000000000021'::uuid, 'Bob''s task, edited on Alice''s phone', tests.get_supabase_uid('gone_bob')) $$,
  'the tasks she wrote in the list that survives stay with it, no longer naming her');
select is((select array_agg(id order by id) from public.lists where id in (
             'a5000000-0000-4000-8000-000000000001', 'a5000000-0000-4000-8000-000000000002', (select user_id from gone))),
  array['a5000000-0000-4000-8000-000000000001'::uuid], 'her private and personal lists are gone; the shared one stays');
select results_eq($$ select event from app_private.account_deletion_audit
                      where request_id in (select request_id from app_private.account_deletion_audit where event = 'purged') order by id $$,
  $$ values ('requested'), ('purged') $$, 'the audit trail keeps that the deletion was requested and carried out');

select * from finish();
rollback;
