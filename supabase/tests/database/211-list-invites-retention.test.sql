-- The retention purge deletes list invites used more than p_retention_days
-- before p_now (migration 20261127000520) and those that expired unused
-- before p_now (20261128003700: nobody joined through them), and keeps
-- pending ones and those used since. Times are relative to a fixed
-- p_now = 2030-01-01; with 30 days the cutoff is 2029-12-02.
begin;
select plan(3);

select from tests.create_supabase_user('inv_retention_owner');
select from tests.create_supabase_user('inv_retention_joiner');

select has_index('app_private', 'list_invites', 'list_invites_spent_at_idx', 'invites are indexed by the moment they stopped being redeemable');

insert into public.lists (id, title, created_by) values ('f3000000-0000-4000-8000-000000000001', 'Old', tests.get_supabase_uid('inv_retention_owner'));
insert into app_private.list_invites (id, list_id, role, code_sha256, created_by, created_at, expires_at, used_at, used_by) values
  ('f3000000-0000-4000-8000-00000000000a', 'f3000000-0000-4000-8000-000000000001', 'viewer', sha256('a'::bytea), tests.get_supabase_uid('inv_retention_owner'), '2029-11-01', '2029-11-08', '2029-11-02', tests.get_supabase_uid('inv_retention_joiner')),
  ('f3000000-0000-4000-8000-00000000000b', 'f3000000-0000-4000-8000-000000000001', 'viewer', sha256('b'::bytea), tests.get_supabase_uid('inv_retention_owner'), '2029-11-01', '2029-11-08', null, null),
  ('f3000000-0000-4000-8000-00000000000c', 'f3000000-0000-4000-8000-000000000001', 'viewer', sha256('c'::bytea), tests.get_supabase_uid('inv_retention_owner'), '2029-11-25', '2029-12-20', '2029-12-10', tests.get_supabase_uid('inv_retention_joiner')),
  ('f3000000-0000-4000-8000-00000000000d', 'f3000000-0000-4000-8000-000000000001', 'viewer', sha256('d'::bytea), tests.get_supabase_uid('inv_retention_owner'), '2029-11-20', '2029-12-05', null, null),
  ('f3000000-0000-4000-8000-00000000000e', 'f3000000-0000-4000-8000-000000000001', 'viewer', sha256('e'::bytea), tests.get_supabase_uid('inv_retention_owner'), '2029-12-30', '2030-01-05', null, null);

select tests.authenticate_as_service_role();
select lives_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 5000, 30, '0') $$, 'the service role runs the purge');
select tests.clear_authentication();
select results_eq($$ select right(id::text, 1) from app_private.list_invites where list_id = 'f3000000-0000-4000-8000-000000000001' order by id $$,
  array['c', 'e'],
  'invites used before the cutoff (a) or expired unused (b before the cutoff, d since) are gone; one used since (c) and a pending one (e) stay');

select * from finish();
rollback;
