-- One statement deleting several users (an operator's `delete from auth.users
-- where id in (…)`, a bulk clean-up) hands each list over to a member the
-- statement does not delete: users it has deleted already are no successors
-- (nor owners who keep a list), and a list whose other members all go with
-- the statement goes too, as a list with no other member does
-- (docs/account-deletion.md, the hand-over). Before, the hand-over before a
-- later row's delete could pick a user whose row the statement had already
-- deleted: two users sharing their personal lists with each other could not
-- be deleted together (23503 on list_members_user_id_fkey).
-- The account purge deletes one account per statement: two such accounts due
-- in one run go too. Migration 20261128009400.
begin;
select plan(17);

-- Users with ids of our choosing: the deletes below go in id order (the
-- primary key's), so each case says whose row goes first.
create temporary table ids (name text primary key, id uuid not null) on commit drop;
create function pg_temp.uid(p_name text) returns uuid language sql stable as $$
  select id from ids where name = p_name
$$;
create function pg_temp.user_(p_name text, p_id uuid) returns void language sql as $$
  insert into ids values (p_name, p_id);
  insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
  values ('00000000-0000-0000-0000-000000000000', p_id, 'authenticated', 'authenticated', p_name || '@test.tidesync.dev',
          '{"provider": "email", "providers": ["email"]}', jsonb_build_object('test_identifier', p_name), now(), now(), false);
$$;
-- Shares p_owner's personal list (id = the owner's id) with p_member.
create function pg_temp.share(p_owner text, p_member text, p_role text, p_since timestamptz) returns void language sql as $$
  insert into public.list_members (list_id, user_id, role, created_at)
  values (pg_temp.uid(p_owner), pg_temp.uid(p_member), p_role, p_since);
$$;
set local enable_seqscan = off;
set local enable_bitmapscan = off;

-- ------------------------------------------------------------ members of each other's personal lists
select pg_temp.user_('mu_a', 'e1600000-0000-4000-8000-000000000001');
select pg_temp.user_('mu_b', 'e1600000-0000-4000-8000-000000000002');
select pg_temp.share('mu_a', 'mu_b', 'viewer', '2026-01-01');
select pg_temp.share('mu_b', 'mu_a', 'editor', '2026-01-01');
select lives_ok($$ delete from auth.users where id in (pg_temp.uid('mu_a'), pg_temp.uid('mu_b')) $$,
  'two users sharing their personal lists with each other are deleted in one statement');
select is_empty($$ select 1 from public.lists where id in (pg_temp.uid('mu_a'), pg_temp.uid('mu_b')) $$,
  'their lists go with them: no other member is left to take them over');
select is_empty($$ select 1 from public.list_members where user_id in (pg_temp.uid('mu_a'), pg_temp.uid('mu_b')) $$,
  'and no membership names either of them');

-- ------------------------------------------------------------ a chain A → B → C, each the best successor of the one before
-- A's list: B (editor), C (editor), then S (viewer), who stays; B's list: C
-- (editor), then A (viewer); C's list: A (editor). A, B and C go in one
-- statement, first in the chain's order, then in the reverse one.
create function pg_temp.chain(p_prefix text, p_a uuid, p_b uuid, p_c uuid, p_s uuid) returns void language sql as $$
  select pg_temp.user_(p_prefix || 'a', p_a);
  select pg_temp.user_(p_prefix || 'b', p_b);
  select pg_temp.user_(p_prefix || 'c', p_c);
  select pg_temp.user_(p_prefix || 's', p_s);
  select pg_temp.share(p_prefix || 'a', p_prefix || 'b', 'editor', '2026-01-01');
  select pg_temp.share(p_prefix || 'a', p_prefix || 'c', 'editor', '2026-02-01');
  select pg_temp.share(p_prefix || 'a', p_prefix || 's', 'viewer', '2026-03-01');
  select pg_temp.share(p_prefix || 'b', p_prefix || 'c', 'editor', '2026-01-01');
  select pg_temp.share(p_prefix || 'b', p_prefix || 'a', 'viewer', '2026-02-01');
  select pg_temp.share(p_prefix || 'c', p_prefix || 'a', 'editor', '2026-01-01');
$$;
select pg_temp.chain('fw_', 'e1600000-0000-4000-8000-000000000011', 'e1600000-0000-4000-8000-000000000012',
                     'e1600000-0000-4000-8000-000000000013', 'e1600000-0000-4000-8000-000000000014');
select pg_temp.chain('rv_', 'e1600000-0000-4000-8000-000000000023', 'e1600000-0000-4000-8000-000000000022',
                     'e1600000-0000-4000-8000-000000000021', 'e1600000-0000-4000-8000-000000000024');

select lives_ok($$ delete from auth.users where id in (pg_temp.uid('fw_a'), pg_temp.uid('fw_b'), pg_temp.uid('fw_c')) $$,
  'a chain A → B → C is deleted in one statement (A''s row first)');
select results_eq($$ select user_id, role from public.list_members where list_id = pg_temp.uid('fw_a') $$,
  $$ values (pg_temp.uid('fw_s'), 'owner') $$,
  'A''s list passes past B and C, deleted with A, to the member who stays');
select is_empty($$ select 1 from public.lists where id in (pg_temp.uid('fw_b'), pg_temp.uid('fw_c')) $$,
  'B''s and C''s lists, whose members all went, go with them');

select lives_ok($$ delete from auth.users where id in (pg_temp.uid('rv_a'), pg_temp.uid('rv_b'), pg_temp.uid('rv_c')) $$,
  'the same chain is deleted in one statement with C''s row first');
select results_eq($$ select user_id, role from public.list_members where list_id = pg_temp.uid('rv_a') $$,
  $$ values (pg_temp.uid('rv_s'), 'owner') $$,
  'A''s list passes to the member who stays');
select is_empty($$ select 1 from public.lists where id in (pg_temp.uid('rv_b'), pg_temp.uid('rv_c')) $$,
  'B''s and C''s lists go with them');

-- ------------------------------------------------------------ a list whose only other member goes in the same statement
-- Two owners each sharing their list with one member; the owner's row goes
-- first in one pair, the member's in the other.
select pg_temp.user_('on_owner_1', 'e1600000-0000-4000-8000-000000000031');
select pg_temp.user_('on_member_1', 'e1600000-0000-4000-8000-000000000032');
select pg_temp.user_('on_member_2', 'e1600000-0000-4000-8000-000000000033');
select pg_temp.user_('on_owner_2', 'e1600000-0000-4000-8000-000000000034');
select pg_temp.share('on_owner_1', 'on_member_1', 'viewer', '2026-01-01');
select pg_temp.share('on_owner_2', 'on_member_2', 'editor', '2026-01-01');
select lives_ok($$ delete from auth.users where id in (pg_temp.uid('on_owner_1'), pg_temp.uid('on_member_1'),
                                                       pg_temp.uid('on_member_2'), pg_temp.uid('on_owner_2')) $$,
  'owners deleted in one statement with the only other member of their lists');
select is_empty($$ select 1 from public.lists l join ids i on i.id = l.id where i.name like 'on\_%' $$,
  'those lists go with them, as a list with no other member does');

-- ------------------------------------------------------------ the account purge: two such accounts due in one run
select pg_temp.user_('pu_a', 'e1600000-0000-4000-8000-000000000041');
select pg_temp.user_('pu_b', 'e1600000-0000-4000-8000-000000000042');
select pg_temp.user_('pu_s', 'e1600000-0000-4000-8000-000000000043');
select pg_temp.share('pu_a', 'pu_b', 'editor', '2026-01-01');
select pg_temp.share('pu_a', 'pu_s', 'viewer', '2026-02-01');
select pg_temp.share('pu_b', 'pu_a', 'editor', '2026-01-01');
insert into app_private.account_deletion_requests (user_id, scheduled_for)
select pg_temp.uid(n), now() + interval '7 days' from unnest(array['pu_a', 'pu_b']) n;
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select results_eq($$ select users_deleted, lists_handed_over from app_private.run_account_deletions(now() + interval '8 days') $$,
  $$ values (2, 1) $$, 'the purge deletes both accounts and hands one list over');
select tests.clear_authentication();
select results_eq($$ select user_id, role from public.list_members where list_id = pg_temp.uid('pu_a') $$,
  $$ values (pg_temp.uid('pu_s'), 'owner') $$,
  'A''s list passes to the member with no deletion pending');
select is_empty($$ select 1 from public.lists where id = pg_temp.uid('pu_b') $$,
  'B''s list, whose other member was purged first, goes with B');

-- ------------------------------------------------------------ a team deleted in one statement: the list changes hands once or twice, not once per member
-- A list owned by its first user, 200 more joined in turn as editors, one viewer who stays; all
-- but the viewer deleted in one statement, in join order (migration 20261128009600: under
-- 009400 each member's own hand-over passed the list on again, which read every membership:
-- cubic, 400 users 10-17 s).
create table public.tidesync_test_owner_changes (list_id uuid, user_id uuid);
create function public.tidesync_test_count_owner_change() returns trigger language plpgsql security definer set search_path = '' as $f$
begin
  insert into public.tidesync_test_owner_changes values (new.list_id, new.user_id);
  return null;
end $f$;
create trigger tidesync_test_owner_change after update on public.list_members
  for each row when (new.role = 'owner' and old.role is distinct from 'owner')
  execute function public.tidesync_test_count_owner_change();
select pg_temp.user_('team_' || lpad(i::text, 3, '0'), ('e1600000-0000-4000-8000-00000000' || lpad((1000 + i)::text, 4, '0'))::uuid)
  from generate_series(0, 200) i;
select pg_temp.user_('team_stays', 'e1600000-0000-4000-8000-000000009999');
insert into public.lists (id, title, created_by) values ('e1600000-0000-4000-8000-00000000aaaa', 'team', pg_temp.uid('team_000'));
insert into public.list_members (list_id, user_id, role, created_at)
select 'e1600000-0000-4000-8000-00000000aaaa', pg_temp.uid('team_' || lpad(i::text, 3, '0')), 'editor', '2026-01-01'::timestamptz + i * interval '1 minute'
  from generate_series(1, 200) i;
insert into public.list_members (list_id, user_id, role, created_at)
values ('e1600000-0000-4000-8000-00000000aaaa', pg_temp.uid('team_stays'), 'viewer', '2027-01-01');
select lives_ok($$ delete from auth.users where id in (select id from ids where name like 'team_%' and name <> 'team_stays') $$,
  'the owner and 200 members of a team list are deleted in one statement');
select results_eq($$ select user_id, role from public.list_members where list_id = 'e1600000-0000-4000-8000-00000000aaaa' $$,
  $$ values (pg_temp.uid('team_stays'), 'owner') $$, 'the team list passes to the member who stays');
select cmp_ok((select count(*)::integer from public.tidesync_test_owner_changes where list_id = 'e1600000-0000-4000-8000-00000000aaaa'), '<=', 2,
  'changing hands at most twice (the first hand-over, then the one after the cascade), not once per deleted member');

select * from finish();
rollback;
