-- Forgetting queued installation ids keeps to a budget (migration
-- 20261127002210): a call sweeps the sync records p_batch at a time until its
-- time budget is spent (at least one batch), keeps its place, and the next
-- call goes on from there; the retention purge gives it its own budget and
-- batch. A zero budget is one batch a call, so the bound is counted, not
-- timed.
begin;
select plan(7);

select from tests.create_supabase_user('sweep_owner');
select from tests.create_supabase_user('sweep_gone');

select tests.authenticate_as('sweep_owner');
insert into public.lists (id, title) values ('a5090000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
values ('a5090000-0000-4000-8000-000000000001', tests.get_supabase_uid('sweep_gone'), 'editor');

-- Five tasks written from one phone (stamped with its device row, as a push
-- stamps them); its user is then deleted.
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at)
values ('a5090000-0000-4000-8000-000000000301', tests.get_supabase_uid('sweep_gone'), 'a5090000-0000-4000-8000-000000000101', 'ios', '1.0.0', 1, now());
select tests.authenticate_as('sweep_gone');
select from set_config('tidesync.device_id', 'a5090000-0000-4000-8000-000000000301', true);
insert into public.tasks (id, list_id, title)
select ('a5090000-0000-4000-8000-00000000020' || g)::uuid, 'a5090000-0000-4000-8000-000000000001', 'Task ' || g
  from generate_series(1, 5) g;
select from set_config('tidesync.device_id', '', true);
select tests.clear_authentication();
delete from auth.users where id = tests.get_supabase_uid('sweep_gone');

create function pg_temp.stamped() returns int language sql as $$
  select count(*)::int from app_private.sync_records
   where collection = 'tasks' and id::text like 'a5090000-%' and field_versions -> '*' ->> 'd' is not null
$$;
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);

-- The retention purge with a batch of one and no time left: one record.
select from app_private.purge_sync_retention(now(), p_batch => 1, p_time_budget => interval '0');
select ok(pg_temp.stamped() >= 4, 'a retention purge run stops at its bound: one record swept, the others still stamped');

-- Another call: one more batch of two, and it says the sweep is not done.
select is(app_private.forget_queued_installations(interval '0', 2), false, 'a call that stops at its bound says the sweep goes on');
select ok(pg_temp.stamped() >= 2, 'that call swept two records more at most');

-- Later runs finish the sweep from where it stopped.
create function pg_temp.finish_sweep() returns int language plpgsql as $$
declare
  v_calls int := 0;
begin
  loop
    v_calls := v_calls + 1;
    exit when app_private.forget_queued_installations(interval '0', 1000) or v_calls > 10000;
  end loop;
  return v_calls;
end
$$;
select ok(pg_temp.finish_sweep() <= 10000, 'later calls finish the sweep');
select is(pg_temp.stamped(), 0, 'every record the phone wrote is forgotten');
select is((select count(*)::int from app_private.installations_to_forget), 0, 'the queue is empty');
select is((select ids from app_private.installation_sweep), null, 'no sweep is left under way');

select tests.clear_authentication();
select * from finish();
rollback;
