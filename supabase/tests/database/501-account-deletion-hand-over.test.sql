-- Ownership hand-over when an owner's account is purged: a list passes to the
-- longest-standing editor, else the longest-standing viewer (members not
-- leaving themselves first); a list with another owner keeps its owners; a
-- list with no other member is deleted with the account. The same when the
-- account is deleted straight from auth.users, without the purge.
begin;
select plan(25);

select from tests.create_supabase_user('handover_owner');
select from tests.create_supabase_user('handover_old_editor');
select from tests.create_supabase_user('handover_new_editor');
select from tests.create_supabase_user('handover_oldest_viewer');
select from tests.create_supabase_user('handover_viewer');
select from tests.create_supabase_user('handover_co_owner');
select from tests.create_supabase_user('handover_leaving_editor');

select tests.authenticate_as('handover_owner');
insert into public.lists (id, title) values
  ('b5000000-0000-4000-8000-000000000001', 'Editors and a viewer'),
  ('b5000000-0000-4000-8000-000000000002', 'Viewers only'),
  ('b5000000-0000-4000-8000-000000000003', 'Two owners'),
  ('b5000000-0000-4000-8000-000000000004', 'Alone'),
  ('b5000000-0000-4000-8000-000000000005', 'Editor leaving too');
select tests.clear_authentication();

-- Memberships with distinct ages (within one transaction now() does not move).
insert into public.list_members (list_id, user_id, role, created_at) values
  ('b5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('handover_oldest_viewer'), 'viewer', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('handover_new_editor'), 'editor', '2026-03-01'),
  ('b5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('handover_old_editor'), 'editor', '2026-02-01'),
  ('b5000000-0000-4000-8000-000000000002', tests.get_supabase_uid('handover_viewer'), 'viewer', '2026-03-01'),
  ('b5000000-0000-4000-8000-000000000002', tests.get_supabase_uid('handover_oldest_viewer'), 'viewer', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000003', tests.get_supabase_uid('handover_co_owner'), 'owner', '2026-03-01'),
  ('b5000000-0000-4000-8000-000000000003', tests.get_supabase_uid('handover_old_editor'), 'editor', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000005', tests.get_supabase_uid('handover_leaving_editor'), 'editor', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000005', tests.get_supabase_uid('handover_viewer'), 'viewer', '2026-03-01');

-- The oldest editor of the last list is leaving too: the viewer who stays takes it.
select tests.authenticate_as('handover_leaving_editor');
select from app_private.request_account_deletion(30);
select tests.authenticate_as('handover_owner');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();

select results_eq($$ select * from app_private.run_account_deletions(now() + interval '8 days') $$,
  $$ values (1, 3) $$, 'only the due request is purged; three lists change hands');

select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000001' order by created_at $$,
  $$ values (tests.get_supabase_uid('handover_oldest_viewer'), 'viewer'),
            (tests.get_supabase_uid('handover_old_editor'), 'owner'),
            (tests.get_supabase_uid('handover_new_editor'), 'editor') $$,
  'the longest-standing editor becomes owner (before an older viewer and a newer editor); the others keep their roles');
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000002' order by created_at $$,
  $$ values (tests.get_supabase_uid('handover_oldest_viewer'), 'owner'), (tests.get_supabase_uid('handover_viewer'), 'viewer') $$,
  'without editors, the longest-standing viewer becomes owner');
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000003' order by created_at $$,
  $$ values (tests.get_supabase_uid('handover_old_editor'), 'editor'), (tests.get_supabase_uid('handover_co_owner'), 'owner') $$,
  'a list with another owner keeps its owners; nobody is promoted');
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000005' order by created_at $$,
  $$ values (tests.get_supabase_uid('handover_leaving_editor'), 'editor'), (tests.get_supabase_uid('handover_viewer'), 'owner') $$,
  'a member who is leaving too is passed over for one who stays');
select is((select count(*)::int from public.lists where id = 'b5000000-0000-4000-8000-000000000004'), 0,
  'a list with no other member is deleted with the account');
select is((select count(*)::int from public.lists where id between 'b5000000-0000-4000-8000-000000000001' and 'b5000000-0000-4000-8000-000000000005'), 4,
  'the four shared lists survive');
select is((select count(*)::int from public.list_members where list_id in (
             select id from public.lists where id between 'b5000000-0000-4000-8000-000000000001' and 'b5000000-0000-4000-8000-000000000005')
             and role = 'owner'), 4, 'every surviving list has exactly one owner');

-- An account deleted straight from auth.users (the dashboard, or
-- supabase.auth.admin.deleteUser(), which skip the purge) hands its lists over too.
select from tests.create_supabase_user('handover_direct_owner');
select tests.authenticate_as('handover_direct_owner');
insert into public.lists (id, title) values ('b5000000-0000-4000-8000-000000000006', 'Owner deleted by an operator');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('b5000000-0000-4000-8000-000000000006', tests.get_supabase_uid('handover_viewer'), 'viewer');
delete from auth.users where id = tests.get_supabase_uid('handover_direct_owner');
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000006' $$,
  $$ values (tests.get_supabase_uid('handover_viewer'), 'owner') $$,
  'a user deleted directly from auth.users hands their list to the member who stays');

-- A user Supabase Auth soft-deletes (auth.admin.deleteUser(id, true): the row
-- stays, deleted_at set, email obfuscated, identities and sessions gone) hands
-- their lists over too (migration 20261126002930).
select from tests.create_supabase_user('handover_soft_owner');
select tests.authenticate_as('handover_soft_owner');
insert into public.lists (id, title) values ('b5000000-0000-4000-8000-000000000007', 'Owner soft-deleted by an operator');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('b5000000-0000-4000-8000-000000000007', tests.get_supabase_uid('handover_viewer'), 'editor');
update auth.users set deleted_at = now(), email = null where id = tests.get_supabase_uid('handover_soft_owner');
delete from auth.sessions where user_id = tests.get_supabase_uid('handover_soft_owner');
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000007'
                    order by user_id = tests.get_supabase_uid('handover_soft_owner') $$,
  $$ values (tests.get_supabase_uid('handover_viewer'), 'owner'), (tests.get_supabase_uid('handover_soft_owner'), 'owner') $$,
  'a user soft-deleted by Supabase Auth hands their list to the member who stays (and stays a member until removed)');
update auth.users set updated_at = now(), deleted_at = now() where id = tests.get_supabase_uid('handover_soft_owner');
select is((select count(*)::int from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000007' and role = 'owner'), 2,
  'a later update of the soft-deleted user hands nothing over again');

-- A member Supabase Auth soft-deleted can never sign in to manage a list: the
-- hand-over passes over them, however long-standing (migration 20261126003500).
select from tests.create_supabase_user('handover_owner_2');
select from tests.create_supabase_user('handover_gone_editor');
select from tests.create_supabase_user('handover_new_viewer');
select tests.authenticate_as('handover_owner_2');
insert into public.lists (id, title) values ('b5000000-0000-4000-8000-000000000008', 'Oldest editor soft-deleted');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role, created_at) values
  ('b5000000-0000-4000-8000-000000000008', tests.get_supabase_uid('handover_gone_editor'), 'editor', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000008', tests.get_supabase_uid('handover_new_viewer'), 'viewer', '2026-03-01');
update auth.users set deleted_at = now() where id = tests.get_supabase_uid('handover_gone_editor');
delete from auth.users where id = tests.get_supabase_uid('handover_owner_2');
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000008' order by role $$,
  $$ values (tests.get_supabase_uid('handover_gone_editor'), 'editor'), (tests.get_supabase_uid('handover_new_viewer'), 'owner') $$,
  'a soft-deleted member is passed over: the viewer who can still sign in becomes the owner');

-- One statement deleting several users (a bulk delete, a dashboard
-- multi-select): each row's hand-over still sees the others as members, so
-- the owner's pick may go too; after the cascade the list passes to the best
-- member left (migration 20261127002400).
select from tests.create_supabase_user('handover_bulk_owner');
select from tests.create_supabase_user('handover_bulk_editor');
select from tests.create_supabase_user('handover_bulk_co_owner');
select from tests.create_supabase_user('handover_bulk_viewer');
select from tests.create_supabase_user('handover_bulk_new_viewer');
select tests.authenticate_as('handover_bulk_owner');
insert into public.lists (id, title) values
  ('b5000000-0000-4000-8000-000000000009', 'Owner and successor deleted together'),
  ('b5000000-0000-4000-8000-000000000010', 'Two owners deleted together');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role, created_at) values
  ('b5000000-0000-4000-8000-000000000009', tests.get_supabase_uid('handover_bulk_editor'), 'editor', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000009', tests.get_supabase_uid('handover_bulk_new_viewer'), 'viewer', '2026-03-01'),
  ('b5000000-0000-4000-8000-000000000009', tests.get_supabase_uid('handover_bulk_viewer'), 'viewer', '2026-02-01'),
  ('b5000000-0000-4000-8000-000000000010', tests.get_supabase_uid('handover_bulk_co_owner'), 'owner', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000010', tests.get_supabase_uid('handover_bulk_viewer'), 'viewer', '2026-02-01');
delete from auth.users where id in (tests.get_supabase_uid('handover_bulk_owner'), tests.get_supabase_uid('handover_bulk_editor'),
                                    tests.get_supabase_uid('handover_bulk_co_owner'));
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000009' order by created_at $$,
  $$ values (tests.get_supabase_uid('handover_bulk_viewer'), 'owner'), (tests.get_supabase_uid('handover_bulk_new_viewer'), 'viewer') $$,
  'owner and editor deleted in one statement: the longest-standing viewer left becomes owner');
select results_eq($$ select user_id, role from public.list_members where list_id = 'b5000000-0000-4000-8000-000000000010' $$,
  $$ values (tests.get_supabase_uid('handover_bulk_viewer'), 'owner') $$,
  'both owners deleted in one statement: the viewer left becomes owner');
-- An owner Supabase Auth soft-deleted can never sign in to manage the list:
-- they do not count as its owner, so the owner who can is handed over from
-- when they go, however they go (migration 20261127002410).
select from tests.create_supabase_user('handover_purged_owner');
select from tests.create_supabase_user('handover_deleted_owner');
select from tests.create_supabase_user('handover_soft_owner_2');
select from tests.create_supabase_user('handover_soft_co_owner');
select from tests.create_supabase_user('handover_stays');
select tests.authenticate_as('handover_purged_owner');
insert into public.lists (id, title) values ('b5000000-0000-4000-8000-000000000011', 'Purged owner, soft-deleted co-owner');
select from app_private.request_account_deletion(7);
select tests.authenticate_as('handover_deleted_owner');
insert into public.lists (id, title) values ('b5000000-0000-4000-8000-000000000012', 'Deleted owner, soft-deleted co-owner');
select tests.authenticate_as('handover_soft_owner_2');
insert into public.lists (id, title) values ('b5000000-0000-4000-8000-000000000013', 'Both owners soft-deleted');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role, created_at) values
  ('b5000000-0000-4000-8000-000000000011', tests.get_supabase_uid('handover_soft_co_owner'), 'owner', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000011', tests.get_supabase_uid('handover_stays'), 'viewer', '2026-02-01'),
  ('b5000000-0000-4000-8000-000000000012', tests.get_supabase_uid('handover_soft_co_owner'), 'owner', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000012', tests.get_supabase_uid('handover_stays'), 'viewer', '2026-02-01'),
  ('b5000000-0000-4000-8000-000000000013', tests.get_supabase_uid('handover_soft_co_owner'), 'owner', '2026-01-01'),
  ('b5000000-0000-4000-8000-000000000013', tests.get_supabase_uid('handover_stays'), 'viewer', '2026-02-01');
update auth.users set deleted_at = now() where id = tests.get_supabase_uid('handover_soft_co_owner');
select results_eq($$ select * from app_private.run_account_deletions(now() + interval '8 days') $$,
  $$ values (1, 1) $$, 'the purge of an owner whose only co-owner is soft-deleted hands the list over');
delete from auth.users where id = tests.get_supabase_uid('handover_deleted_owner');
update auth.users set deleted_at = now() where id = tests.get_supabase_uid('handover_soft_owner_2');
select results_eq($$ select l.title, m.role from public.list_members m join public.lists l on l.id = m.list_id
                     where m.user_id = tests.get_supabase_uid('handover_stays') and l.id <> m.user_id order by l.id $$,
  $$ values ('Purged owner, soft-deleted co-owner', 'owner'), ('Deleted owner, soft-deleted co-owner', 'owner'), ('Both owners soft-deleted', 'owner') $$,
  'the member who can sign in becomes owner: owner purged, deleted directly, or soft-deleted too');
select is((select count(*)::int from public.list_members where user_id = tests.get_supabase_uid('handover_soft_co_owner') and role = 'owner'
             and list_id between 'b5000000-0000-4000-8000-000000000011' and 'b5000000-0000-4000-8000-000000000013'), 3,
  'the soft-deleted co-owner stays a member until removed');

-- An operator deletes a user whose deletion is pending (the dashboard,
-- auth.admin.deleteUser(id)): the audit trail records the outcome of the
-- request, with the list handed over, as the purge would (migration
-- 20261127002420); the purge records its own outcome once.
select from tests.create_supabase_user('handover_operator_deleted');
select tests.authenticate_as('handover_operator_deleted');
insert into public.lists (id, title) values ('b5000000-0000-4000-8000-000000000014', 'Owner deleted by an operator during the grace period');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('b5000000-0000-4000-8000-000000000014', tests.get_supabase_uid('handover_stays'), 'viewer');
create temp table operator_request as
  select request_id from app_private.account_deletion_requests where user_id = tests.get_supabase_uid('handover_operator_deleted');
delete from auth.users where id = tests.get_supabase_uid('handover_operator_deleted');
select results_eq($$ select event, lists_handed_over from app_private.account_deletion_audit
                     where request_id = (select request_id from operator_request) order by id $$,
  $$ values ('requested', null::int), ('purged', 1) $$,
  'a pending deletion carried out by an operator''s delete is recorded as purged, with the list handed over');
select is((select count(*)::int from app_private.account_deletion_audit a
            where a.event = 'purged' and exists (select 1 from app_private.account_deletion_audit r
                                                  where r.request_id = a.request_id and r.event = 'requested')
            group by a.request_id order by 1 desc limit 1), 1,
  'each carried-out request has one purged row (the purge''s own runs too)');

-- The last owner who can sign in may neither step down nor leave beside a soft-deleted co-owner
-- (20261127002500): the list would be left to an owner who never signs in again.
select from tests.create_supabase_user('keep_live_owner');
select from tests.create_supabase_user('keep_soft_co_owner');
select from tests.create_supabase_user('keep_editor');
select tests.authenticate_as('keep_live_owner');
insert into public.lists (id, title) values ('b6000000-0000-4000-8000-000000000001', 'Live owner beside a soft-deleted one');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('b6000000-0000-4000-8000-000000000001', tests.get_supabase_uid('keep_soft_co_owner'), 'owner'),
  ('b6000000-0000-4000-8000-000000000001', tests.get_supabase_uid('keep_editor'), 'editor');
update auth.users set deleted_at = now() where id = tests.get_supabase_uid('keep_soft_co_owner');
select tests.authenticate_as('keep_live_owner');
select throws_ok($$ update public.list_members set role = 'viewer'
                    where list_id = 'b6000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  '23514', 'a list must keep an owner: make another member owner first, or delete the list',
  'the last owner who can sign in cannot step down when the other owner is soft-deleted');
select throws_ok($$ delete from public.list_members
                    where list_id = 'b6000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  '23514', 'a list must keep an owner: make another member owner first, or delete the list',
  'nor leave');
select lives_ok($$ update public.list_members set role = 'owner'
                    where list_id = 'b6000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('keep_editor') $$,
  'they make the editor owner first');
select lives_ok($$ delete from public.list_members
                    where list_id = 'b6000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  'and then may leave');
select tests.clear_authentication();

-- A banned owner cannot sign in either (app_private.cannot_sign_in, migration
-- 20261128001000): the owner beside one may not step down, and a deleted
-- owner's list with only a banned co-owner left passes to its member (the
-- banned co-owner stays owner, should the ban be lifted).
select from tests.create_supabase_user('keep_banned_co_owner');
select tests.authenticate_as('keep_live_owner');
insert into public.lists (id, title) values ('b6000000-0000-4000-8000-000000000002', 'Live owner beside a banned one');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('b6000000-0000-4000-8000-000000000002', tests.get_supabase_uid('keep_banned_co_owner'), 'owner'),
  ('b6000000-0000-4000-8000-000000000002', tests.get_supabase_uid('keep_editor'), 'editor');
update auth.users set banned_until = now() + interval '100 years' where id = tests.get_supabase_uid('keep_banned_co_owner');
select tests.authenticate_as('keep_live_owner');
select throws_ok($$ update public.list_members set role = 'viewer'
                    where list_id = 'b6000000-0000-4000-8000-000000000002' and user_id = (select auth.uid()) $$,
  '23514', 'a list must keep an owner: make another member owner first, or delete the list',
  'the last owner who can sign in cannot step down when the other owner is banned');
select tests.clear_authentication();
delete from auth.users where id = tests.get_supabase_uid('keep_live_owner');
select set_eq($$ select user_id, role from public.list_members where list_id = 'b6000000-0000-4000-8000-000000000002' $$,
  $$ values (tests.get_supabase_uid('keep_banned_co_owner'), 'owner'), (tests.get_supabase_uid('keep_editor'), 'owner') $$,
  'the owner deleted beside a banned co-owner: the editor becomes owner too');

select * from finish();
rollback;
