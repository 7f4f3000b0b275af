-- The export's doors as 20261126001800 left them: my_account() answers the
-- caller's app metadata, my_storage_objects() each object's user_metadata,
-- my_list_invites() the invites the caller created (also on a list they no
-- longer own), my_accepted_list_invites() the invites they used,
-- my_mfa_factors() their MFA factors' metadata and never a secret; only about
-- the caller, only to authenticated.
begin;
select plan(20);

select from tests.create_supabase_user('export_erin');
select from tests.create_supabase_user('export_frank');
select from tests.create_supabase_user('export_grace');
-- What an admin sets with auth.admin.updateUserById({ app_metadata }).
update auth.users set raw_app_meta_data = raw_app_meta_data || '{"plan": "erin-pro"}' where id = tests.get_supabase_uid('export_erin');
update auth.users set raw_app_meta_data = raw_app_meta_data || '{"plan": "frank-free"}' where id = tests.get_supabase_uid('export_frank');

-- Objects with the uploader's own metadata (Storage's `metadata` option of upload).
insert into storage.buckets (id, name) values ('export-506', 'export-506');
insert into storage.objects (bucket_id, name, owner_id, metadata, user_metadata)
values ('export-506', 'erin/a.txt', tests.get_supabase_uid('export_erin')::text, '{"size": 1, "mimetype": "text/plain"}', '{"caption": "erin-caption"}'),
       ('export-506', 'frank/a.txt', tests.get_supabase_uid('export_frank')::text, '{}', '{"caption": "frank-caption"}');

-- MFA factors as Supabase Auth enrolls them: a verified TOTP factor of Erin's, one of Frank's.
insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret, phone)
values ('e5060000-0000-4000-8000-000000000001', tests.get_supabase_uid('export_erin'), 'Erin''s phone', 'totp', 'verified',
        now() - interval '1 day', now(), 'ERIN-TOTP-SECRET', null),
       ('e5060000-0000-4000-8000-000000000002', tests.get_supabase_uid('export_erin'), 'Erin''s SMS', 'phone', 'unverified',
        now(), now(), null, '+15550000506'),
       ('e5060000-0000-4000-8000-000000000003', tests.get_supabase_uid('export_frank'), 'Frank''s phone', 'totp', 'verified',
        now(), now(), 'FRANK-TOTP-SECRET', null);
-- Their sessions completed MFA (Supabase Auth's mfa.verify raises them to aal2):
-- an aal1 session of a user with a verified factor reaches nothing (pgTAP 142).
update auth.sessions set aal = 'aal2'
 where user_id in (tests.get_supabase_uid('export_erin'), tests.get_supabase_uid('export_frank'));

-- Erin's list, shared with Grace as owner through an invite Grace used; Grace
-- then invites Frank (who uses it) and another, then Erin demotes Grace: the
-- list's invites are no longer Grace's to read through the policy.
select tests.authenticate_as('export_erin');
insert into public.lists (id, title) values ('e5060000-0000-4000-8000-0000000000a1', 'Erin shares');
select from set_config('tests.grace_code', public.create_list_invite('e5060000-0000-4000-8000-0000000000a1', 'owner'), true);
select tests.authenticate_as('export_grace');
select from public.accept_list_invite(current_setting('tests.grace_code'));
select from set_config('tests.frank_code', public.create_list_invite('e5060000-0000-4000-8000-0000000000a1', 'viewer'), true);
select from public.create_list_invite('e5060000-0000-4000-8000-0000000000a1', 'editor');
select tests.authenticate_as('export_frank');
select from public.accept_list_invite(current_setting('tests.frank_code'));
select tests.authenticate_as('export_erin');
update public.list_members set role = 'editor'
 where list_id = 'e5060000-0000-4000-8000-0000000000a1' and user_id = tests.get_supabase_uid('export_grace');
select tests.clear_authentication();

-- ------------------------------------------------------------ privileges
select is(tests.function_callers('app_private.my_list_invites()'), array['authenticated'], 'my_list_invites: authenticated only');
select is(tests.function_callers('app_private.my_accepted_list_invites()'), array['authenticated'], 'my_accepted_list_invites: authenticated only');
select is(tests.function_callers('app_private.my_mfa_factors()'), array['authenticated'], 'my_mfa_factors: authenticated only');
select is(tests.function_callers('app_private.my_account()'), array['authenticated'], 'my_account: still authenticated only');
select is(tests.function_callers('app_private.my_storage_objects()'), array['authenticated'], 'my_storage_objects: still authenticated only');
select is((select array_agg(p.proconfig[1] order by p.proname) from pg_catalog.pg_proc p
            where p.oid in ('app_private.my_list_invites()'::regprocedure, 'app_private.my_accepted_list_invites()'::regprocedure,
                            'app_private.my_mfa_factors()'::regprocedure, 'app_private.my_account()'::regprocedure,
                            'app_private.my_storage_objects()'::regprocedure)
              and p.prosecdef),
  array['search_path=""', 'search_path=""', 'search_path=""', 'search_path=""', 'search_path=""'],
  'all five are security definer with an empty search_path');
select is((select array_agg(a order by a) from pg_catalog.pg_proc p, unnest(p.proargnames) a
            where p.oid = 'app_private.my_mfa_factors()'::regprocedure),
  array['created_at', 'factor_type', 'friendly_name', 'id', 'last_challenged_at', 'status', 'updated_at', 'web_authn_aaguid'],
  'my_mfa_factors() answers only the factors'' metadata (the authenticator model''s public aaguid among it): no secret, phone, nor WebAuthn credential or challenge column');

-- ------------------------------------------------------------ as Erin
select tests.authenticate_as('export_erin');
select is((select app_metadata from app_private.my_account()),
  '{"provider": "email", "providers": ["email"], "plan": "erin-pro"}'::jsonb,
  'my_account() answers the caller''s app metadata (provider, providers, what an admin set)');
select results_eq($$ select name, user_metadata from app_private.my_storage_objects() $$,
  $$ values ('erin/a.txt', '{"caption": "erin-caption"}'::jsonb) $$,
  'my_storage_objects() answers each of the caller''s objects with its user_metadata');
select results_eq($$ select id, friendly_name, factor_type, status from app_private.my_mfa_factors() $$,
  $$ values ('e5060000-0000-4000-8000-000000000001'::uuid, 'Erin''s phone', 'totp', 'verified'),
            ('e5060000-0000-4000-8000-000000000002'::uuid, 'Erin''s SMS', 'phone', 'unverified') $$,
  'my_mfa_factors() lists the caller''s factors, oldest first, and no one else''s');
select ok((select bool_and(created_at is not null and updated_at is not null) from app_private.my_mfa_factors()),
  'each factor with its times');
select results_eq($$ select role, used_at is not null from app_private.my_list_invites() $$, $$ values ('owner', true) $$,
  'my_list_invites() lists the invite the caller created');

-- ------------------------------------------------------------ as Grace (demoted)
select tests.authenticate_as('export_grace');
select is_empty($$ select 1 from app_private.list_invites where created_by = tests.get_supabase_uid('export_grace') $$,
  'through the policy, the demoted owner no longer sees the invites she created');
select results_eq($$ select list_id, role, used_at is not null from app_private.my_list_invites() order by role $$,
  $$ values ('e5060000-0000-4000-8000-0000000000a1'::uuid, 'editor', false),
            ('e5060000-0000-4000-8000-0000000000a1'::uuid, 'viewer', true) $$,
  'my_list_invites() still lists them: created by the caller, on a list she no longer owns');
select results_eq($$ select list_id, role from app_private.my_accepted_list_invites() $$,
  $$ values ('e5060000-0000-4000-8000-0000000000a1'::uuid, 'owner') $$,
  'my_accepted_list_invites() lists the invite the caller used (and not those she created)');
select ok((select used_at is not null from app_private.my_accepted_list_invites()), 'with the moment it was used');

-- ------------------------------------------------------------ as Frank
select tests.authenticate_as('export_frank');
select results_eq($$ select list_id, role from app_private.my_accepted_list_invites() $$,
  $$ values ('e5060000-0000-4000-8000-0000000000a1'::uuid, 'viewer') $$,
  'another user who used an invite gets his own, not hers');

-- ------------------------------------------------------------ anon, nobody
select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.my_mfa_factors() $$, '42501', null, 'anon cannot call my_mfa_factors()');
select throws_ok($$ select * from app_private.my_accepted_list_invites() $$, '42501', null, 'anon cannot call my_accepted_list_invites()');
select tests.clear_authentication();
select is((select count(*)::int from app_private.my_mfa_factors()) + (select count(*)::int from app_private.my_list_invites())
          + (select count(*)::int from app_private.my_accepted_list_invites()), 0,
  'without a caller they answer nothing');

select * from finish();
rollback;
