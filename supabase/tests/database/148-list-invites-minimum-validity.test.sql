-- The cap of 100 pending invites per list bounds the invite rows an owner
-- piles up (migration 20261128003700): an invite is valid for at least a
-- minute (a shorter one was pending for too short a time to count towards
-- the cap: 500 creates valid 1 microsecond all succeeded, and their rows
-- were kept retention_days), and the retention purge deletes invites that
-- expired unused at its next run; used ones stay retention_days for their
-- owners to see who joined. Purge times are relative to a fixed
-- p_now = 2030-01-01; with 30 days the cutoff is 2029-12-02.
begin;
select plan(11);

select from tests.create_supabase_user('min_validity_owner');
select from tests.create_supabase_user('min_validity_joiner');

select tests.authenticate_as('min_validity_owner');
insert into public.lists (id, title) values ('f4800000-0000-4000-8000-000000000001', 'Short-lived');
select throws_ok($$ select public.create_list_invite('f4800000-0000-4000-8000-000000000001', 'viewer', interval '1 microsecond') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'an invite valid 1 microsecond is refused, naming the range');
select throws_ok($$ select public.create_list_invite('f4800000-0000-4000-8000-000000000001', 'viewer', interval '59 seconds') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'so is one valid 59 seconds');
select lives_ok($$ select public.create_list_invite('f4800000-0000-4000-8000-000000000001', 'viewer', interval '1 minute') $$,
  'an invite valid 1 minute is created');
select lives_ok($$ select public.create_list_invite('f4800000-0000-4000-8000-000000000001', 'viewer', interval '30 days') $$,
  'and one valid 30 days');
select results_eq($$ select expires_at - created_at from app_private.list_invites where list_id = 'f4800000-0000-4000-8000-000000000001' order by 1 $$,
  $$ values (interval '1 minute'), (interval '30 days') $$, 'only the two accepted creates left a row');
select tests.clear_authentication();

-- The purge's lookup of expired unused invites reads an index.
select has_index('app_private', 'list_invites', 'list_invites_unused_expires_at_idx', array['expires_at'],
  'unused invites are indexed by when they expire');
select is((select pg_get_expr(i.indpred, i.indrelid) from pg_index i where i.indexrelid = to_regclass('app_private.list_invites_unused_expires_at_idx')),
  '(used_at IS NULL)', 'the index holds only unused invites');

insert into public.lists (id, title, created_by) values ('f4800000-0000-4000-8000-000000000002', 'Purged', tests.get_supabase_uid('min_validity_owner'));
insert into app_private.list_invites (id, list_id, role, code_sha256, created_by, created_at, expires_at, used_at, used_by) values
  -- expired unused a minute before p_now, and a day before: no use to anyone
  ('f4800000-0000-4000-8000-00000000000a', 'f4800000-0000-4000-8000-000000000002', 'viewer', sha256('a'::bytea), tests.get_supabase_uid('min_validity_owner'), '2029-12-31 23:58', '2029-12-31 23:59', null, null),
  ('f4800000-0000-4000-8000-00000000000b', 'f4800000-0000-4000-8000-000000000002', 'viewer', sha256('b'::bytea), tests.get_supabase_uid('min_validity_owner'), '2029-12-24', '2029-12-31', null, null),
  -- used a day before p_now (its validity since over), used before the cutoff
  ('f4800000-0000-4000-8000-00000000000c', 'f4800000-0000-4000-8000-000000000002', 'viewer', sha256('c'::bytea), tests.get_supabase_uid('min_validity_owner'), '2029-12-30', '2029-12-31 12:00', '2029-12-31', tests.get_supabase_uid('min_validity_joiner')),
  ('f4800000-0000-4000-8000-00000000000d', 'f4800000-0000-4000-8000-000000000002', 'viewer', sha256('d'::bytea), tests.get_supabase_uid('min_validity_owner'), '2029-11-01', '2029-11-08', '2029-11-02', tests.get_supabase_uid('min_validity_joiner')),
  -- still pending at p_now
  ('f4800000-0000-4000-8000-00000000000e', 'f4800000-0000-4000-8000-000000000002', 'viewer', sha256('e'::bytea), tests.get_supabase_uid('min_validity_owner'), '2029-12-31', '2030-01-01 00:01', null, null);

select tests.authenticate_as_service_role();
select lives_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 5000, 30, '0') $$, 'the service role runs the purge');
select tests.clear_authentication();
select results_eq($$ select right(id::text, 1) from app_private.list_invites where list_id = 'f4800000-0000-4000-8000-000000000002' order by id $$,
  array['c', 'e'],
  'invites that expired unused (a, b) are gone at the next run, as is one used before the cutoff (d); one used since (c) and a pending one (e) stay');

-- In batches, like the rest of the purge: a zero budget is one batch.
insert into app_private.list_invites (list_id, role, code_sha256, created_by, created_at, expires_at)
select 'f4800000-0000-4000-8000-000000000002', 'viewer', sha256(convert_to('batch' || n, 'UTF8')), tests.get_supabase_uid('min_validity_owner'), '2029-12-31', '2029-12-31 00:01'
  from generate_series(1, 5) n;
select tests.authenticate_as_service_role();
select from app_private.purge_sync_retention('2030-01-01', 2, 30, '0');
select tests.clear_authentication();
select is((select count(*)::integer from app_private.list_invites where list_id = 'f4800000-0000-4000-8000-000000000002' and used_at is null and expires_at < '2030-01-01'),
  3, 'a run with p_batch 2 and no time budget deletes one batch of them');
select tests.authenticate_as_service_role();
select from app_private.purge_sync_retention('2030-01-01', 2, 30, '1 minute');
select tests.clear_authentication();
select is((select count(*)::integer from app_private.list_invites where list_id = 'f4800000-0000-4000-8000-000000000002' and used_at is null and expires_at < '2030-01-01'),
  0, 'a run with time to spare deletes the rest, batch after batch');

select * from finish();
rollback;
