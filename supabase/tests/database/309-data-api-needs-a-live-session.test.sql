-- The Data API (PostgREST, supabase-js) and Realtime accept an access token
-- until its exp, up to an hour after its session was signed out; they run the
-- request as role authenticated with the token's claims, so the policies and
-- the public functions decide. They now refuse a caller whose session no
-- longer counts (app_private.session_is_live, through app_private.live_uid()):
-- signed out (its auth.sessions row deleted), user banned or soft-deleted, or
-- a token without a session_id claim (migration 20261128001800). Every
-- dead caller here is an owner of the list, so every door an owner has is
-- tried; the live owner beside them is the control.
begin;
select plan(16);

select from unnest(array['dead_alice', 'dead_revoked', 'dead_banned', 'dead_deleted', 'dead_member']) name,
  lateral tests.create_supabase_user(name);

select tests.authenticate_as('dead_alice');
insert into public.lists (id, title) values ('f9000000-0000-4000-8000-000000000001', 'Private');
insert into public.lists (id, title) values ('f9000000-0000-4000-8000-000000000002', 'Invited to');
insert into public.tasks (id, list_id, title) values ('f9100000-0000-4000-8000-000000000001', 'f9000000-0000-4000-8000-000000000001', 'secret');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
select 'f9000000-0000-4000-8000-000000000001', tests.get_supabase_uid(name), 'owner'
  from unnest(array['dead_revoked', 'dead_banned', 'dead_deleted']) name;
insert into public.list_members (list_id, user_id, role)
values ('f9000000-0000-4000-8000-000000000001', tests.get_supabase_uid('dead_member'), 'editor');
-- One editor code of Alice's to the second list per caller (a failed accept
-- leaves it unused, a successful one uses it): the code is 'code-<caller>'.
insert into app_private.list_invites (list_id, role, code_sha256, created_by, expires_at)
select 'f9000000-0000-4000-8000-000000000002', 'editor', sha256(convert_to('code-' || name, 'UTF8')),
       tests.get_supabase_uid('dead_alice'), now() + interval '1 day'
  from unnest(array['dead_alice', 'dead_revoked', 'dead_banned', 'dead_deleted', 'dead_nosession']) name;

-- Everything an owner can do through the Data API and Realtime, as p_who
-- (their first session; p_claims replaces the token's claims; p_mark is the
-- api function's mark of a transaction whose session it checked), undone
-- afterwards: what each door let through (rows, 'ok', or the SQLSTATE).
create function pg_temp.reach(p_who text, p_claims jsonb default null, p_mark text default null) returns jsonb language plpgsql as $$
declare
  v_list constant uuid := 'f9000000-0000-4000-8000-000000000001';
  v_me uuid := tests.get_supabase_uid(case p_who when 'dead_nosession' then 'dead_alice' else p_who end);
  v_member uuid := tests.get_supabase_uid('dead_member');
  v_code constant text := 'code-' || p_who;
  v jsonb := '{}';
  v_n bigint;
  v_topic_seen boolean;
begin
  -- Realtime's probe of a join (601-realtime-pokes): a message it inserts as its admin.
  insert into realtime.messages (id, topic, extension)
  values ('f9200000-0000-4000-8000-000000000001', 'tidesync:scope:' || v_list, 'broadcast'),
         ('f9200000-0000-4000-8000-000000000002', 'tidesync:user:' || v_me, 'broadcast');
  begin
    perform tests.authenticate_as(case p_who when 'dead_nosession' then 'dead_alice' else p_who end);
    if p_claims is not null then
      perform set_config('request.jwt.claims', p_claims::text, true);
    end if;
    if p_mark is not null then
      perform set_config('tidesync.live_session', p_mark, true);
    end if;
    v := v || jsonb_build_object(
      'read list', (select count(*) from public.lists where id = v_list),
      'read tasks', (select count(*) from public.tasks where list_id = v_list),
      'read members', (select count(*) from public.list_members where list_id = v_list),
      'read profile', (select count(*) from public.profiles where id = v_me));
    perform set_config('realtime.topic', 'tidesync:scope:' || v_list, true);
    select exists (select 1 from realtime.messages where id = 'f9200000-0000-4000-8000-000000000001') into v_topic_seen;
    v := v || jsonb_build_object('join list topic', v_topic_seen);
    perform set_config('realtime.topic', 'tidesync:user:' || v_me, true);
    select exists (select 1 from realtime.messages where id = 'f9200000-0000-4000-8000-000000000002') into v_topic_seen;
    v := v || jsonb_build_object('join user topic', v_topic_seen);
    perform set_config('realtime.topic', '', true);

    begin
      insert into public.tasks (list_id, title) values (v_list, 'written by ' || p_who);
      v := v || '{"insert task": "ok"}';
    exception when others then v := v || jsonb_build_object('insert task', sqlstate);
    end;
    update public.tasks set title = 'changed' where list_id = v_list;
    get diagnostics v_n = row_count;
    v := v || jsonb_build_object('update tasks', v_n);
    begin
      insert into public.lists (title) values ('new list');
      v := v || '{"create list": "ok"}';
    exception when others then v := v || jsonb_build_object('create list', sqlstate);
    end;
    update public.lists set title = 'renamed' where id = v_list;
    get diagnostics v_n = row_count;
    v := v || jsonb_build_object('rename list', v_n);
    begin
      perform public.create_list_invite(v_list, 'owner');
      v := v || '{"create owner invite": "ok"}';
    exception when others then v := v || jsonb_build_object('create owner invite', sqlstate);
    end;
    begin
      perform public.accept_list_invite(v_code);
      v := v || '{"accept invite": "ok"}';
    exception when others then v := v || jsonb_build_object('accept invite', sqlstate);
    end;
    update public.list_members set role = 'viewer' where list_id = v_list and user_id = v_member;
    get diagnostics v_n = row_count;
    v := v || jsonb_build_object('demote member', v_n);
    update public.profiles set display_name = 'renamed' where id = v_me;
    get diagnostics v_n = row_count;
    v := v || jsonb_build_object('update profile', v_n);
    v := v || jsonb_build_object('complete onboarding',
      (select count(*) from public.complete_onboarding_steps(array['welcome'])));
    delete from public.tasks where list_id = v_list;
    get diagnostics v_n = row_count;
    v := v || jsonb_build_object('delete tasks', v_n);
    delete from public.list_members where list_id = v_list and user_id = v_member;
    get diagnostics v_n = row_count;
    v := v || jsonb_build_object('remove member', v_n);
    delete from public.list_members where list_id = v_list and user_id = v_me;
    get diagnostics v_n = row_count;
    v := v || jsonb_build_object('leave list', v_n);
    raise exception 'undo' using errcode = 'TSUND';
  exception when sqlstate 'TSUND' then
    null; -- every write above, and the role switch, rolled back
  end;
  delete from realtime.messages where id::text like 'f9200000-%';
  return v;
end;
$$;

-- What a live owner reaches (the control), and what nobody without a live session may.
create function pg_temp.nothing() returns jsonb language sql as $$
  select '{"read list": 0, "read tasks": 0, "read members": 0, "read profile": 0,
           "join list topic": false, "join user topic": false,
           "insert task": "42501", "update tasks": 0, "create list": "42501", "rename list": 0,
           "create owner invite": "42501", "accept invite": "42501", "demote member": 0,
           "update profile": 0, "complete onboarding": 0, "delete tasks": 0,
           "remove member": 0, "leave list": 0}'::jsonb $$;

select is(pg_temp.reach('dead_alice'),
  '{"read list": 1, "read tasks": 1, "read members": 5, "read profile": 1,
    "join list topic": true, "join user topic": true,
    "insert task": "ok", "update tasks": 2, "create list": "ok", "rename list": 1,
    "create owner invite": "ok", "accept invite": "ok", "demote member": 1,
    "update profile": 1, "complete onboarding": 1, "delete tasks": 2,
    "remove member": 1, "leave list": 1}'::jsonb,
  'a live owner reaches every door of the Data API and Realtime (the control)');
select is(pg_temp.reach('dead_revoked'),
  '{"read list": 1, "read tasks": 1, "read members": 5, "read profile": 1,
    "join list topic": true, "join user topic": true,
    "insert task": "ok", "update tasks": 2, "create list": "ok", "rename list": 1,
    "create owner invite": "ok", "accept invite": "ok", "demote member": 1,
    "update profile": 1, "complete onboarding": 1, "delete tasks": 2,
    "remove member": 1, "leave list": 1}'::jsonb,
  'so does a second owner while their session is live');

-- Sign-out (DELETE /v1/auth/session, DELETE /v1/devices/{id}, another session's
-- deletion request): the auth.sessions row goes; the access token, with its
-- session_id, stays unexpired.
select from set_config('tests.revoked_session', tests.get_session_id('dead_revoked')::text, true);
delete from auth.sessions where user_id = tests.get_supabase_uid('dead_revoked');
update auth.users set banned_until = now() + interval '100 years' where id = tests.get_supabase_uid('dead_banned');
update auth.users set deleted_at = now() where id = tests.get_supabase_uid('dead_deleted');

create function pg_temp.claims_of(p_who text, p_session uuid) returns jsonb language sql as $$
  select jsonb_build_object('sub', tests.get_supabase_uid(p_who), 'role', 'authenticated', 'aud', 'authenticated',
                            'session_id', p_session) $$;
select is(pg_temp.reach('dead_revoked', pg_temp.claims_of('dead_revoked', current_setting('tests.revoked_session')::uuid)), pg_temp.nothing(),
  'a signed-out session (its auth.sessions row deleted) reaches nothing: no read, no write, no invite, no channel');
select is(pg_temp.reach('dead_banned'), pg_temp.nothing(),
  'a banned user''s live session reaches nothing: in particular no invite admits them (the redeemer must be able to sign in too)');
select is(pg_temp.reach('dead_deleted'), pg_temp.nothing(),
  'a soft-deleted user''s session reaches nothing');
select is(pg_temp.reach('dead_nosession', pg_temp.claims_of('dead_alice', null) - 'session_id'), pg_temp.nothing(),
  'a token without a session_id claim (not one Supabase Auth issues; the api function answers it 401) reaches nothing');
select is(pg_temp.reach('dead_nosession', pg_temp.claims_of('dead_alice', tests.get_session_id('dead_member'))), pg_temp.nothing(),
  'nor does a token naming another user''s live session');
select is(pg_temp.reach('dead_alice') ->> 'create owner invite', 'ok',
  'the live owner beside them is unaffected');

-- The api function checks the session when its transaction begins and marks it
-- (tidesync.live_session): the request runs to its end as if before a
-- sign-out that commits meanwhile; the mark counts for that session only.
select is(pg_temp.reach('dead_revoked', pg_temp.claims_of('dead_revoked', current_setting('tests.revoked_session')::uuid),
                        current_setting('tests.revoked_session')) ->> 'read tasks', '1',
  'an api request whose session check passed keeps its rights to its end when the session is signed out meanwhile');
select is(pg_temp.reach('dead_revoked', pg_temp.claims_of('dead_revoked', current_setting('tests.revoked_session')::uuid),
                        tests.get_session_id('dead_alice')::text), pg_temp.nothing(),
  'a mark naming another session counts for nothing');

-- The lifted ban: the same session counts again.
update auth.users set banned_until = now() - interval '1 second' where id = tests.get_supabase_uid('dead_banned');
select is(pg_temp.reach('dead_banned') ->> 'read tasks', '1', 'once the ban is over, the session works again');

-- ------------------------------------------------------------ the rule and its cost
select is(tests.function_callers('app_private.live_uid()'), array['authenticated'],
  'live_uid(): the policies'' helper, for signed-in callers only');
select is(pg_get_function_result('app_private.live_uid()'::regprocedure), 'uuid', 'live_uid() answers the caller''s id or null');
-- The check runs once per statement (the policies' initplans), not once per row
-- (and once more while planning: the planner folds my_list_ids() to estimate unnest's rows).
-- Counted by track_functions, which only a superuser may set (on Supabase too:
-- it is not among supautils' privileged_role_allowed_configs): skipped for a role that may not.
select has_parameter_privilege('track_functions', 'set') as may_count_calls \gset
\if :may_count_calls
set local track_functions = 'all';
create function pg_temp.checks_during(p_statement text) returns bigint language plpgsql as $$
declare
  v_before bigint := coalesce((select calls from pg_stat_xact_user_functions where schemaname = 'app_private' and funcname = 'session_is_live'), 0);
begin
  perform tests.authenticate_as('dead_alice');
  execute p_statement;
  perform tests.clear_authentication();
  return coalesce((select calls from pg_stat_xact_user_functions where schemaname = 'app_private' and funcname = 'session_is_live'), 0) - v_before;
end;
$$;
select is(pg_temp.checks_during($$ insert into public.tasks (list_id, title) select 'f9000000-0000-4000-8000-000000000001', 'bulk ' || i from generate_series(1, 200) i $$),
          pg_temp.checks_during($$ insert into public.tasks (list_id, title) values ('f9000000-0000-4000-8000-000000000001', 'one') $$),
  'inserting 200 tasks checks the session as often as inserting one');
select is(pg_temp.checks_during($$ update public.tasks set done = true where list_id = 'f9000000-0000-4000-8000-000000000001' $$),
          pg_temp.checks_during($$ update public.tasks set done = true where id = 'f9100000-0000-4000-8000-000000000001' $$),
  'updating 202 tasks checks it as often as updating one');
select is(pg_temp.checks_during($$ select * from public.tasks where list_id = 'f9000000-0000-4000-8000-000000000001' $$),
          pg_temp.checks_during($$ select * from public.tasks where id = 'f9100000-0000-4000-8000-000000000001' $$),
  'reading 202 tasks checks it as often as reading one');
\else
select diag(format('%s may not set track_functions: how often a statement checks the session is not counted', current_user));
select skip('counting function calls needs track_functions', 3);
\endif

select * from finish();
rollback;
