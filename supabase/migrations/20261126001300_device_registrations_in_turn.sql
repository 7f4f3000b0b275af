-- What: app_private.lock_user_devices(user_id), a transaction-level advisory
-- lock keyed by the user; registerDevice (POST /v1/auth/session) takes it
-- before anything else, so one user's device registrations run in turn.
-- Why: four session starts with one token on four installations at once
-- answered 201, 500, 500, 500. Each "unbind this session elsewhere" missed the
-- others' uncommitted devices, and the upsert's on conflict (user_id,
-- installation_id) does not cover unique (session_id), so the later inserts
-- failed on devices_session_id_key (23505). In turn, each later registration's
-- unbind (a new statement under READ COMMITTED) sees the earlier device and
-- moves the binding, as when the starts come one after the other. Keyed by the
-- user rather than the session: a user has a handful of installs, and other
-- writes of a user's devices can take the same turn. EXECUTE for
-- authenticated gives no new power: any role may take advisory locks.
-- tests/integration/device-session-races.test.ts.
-- Rollback: supabase/rollbacks/20261126001300_device_registrations_in_turn.down.sql

create function app_private.lock_user_devices(p_user_id uuid)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  select pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('tidesync.user_devices:' || p_user_id::text, 0));
$$;
comment on function app_private.lock_user_devices(uuid) is
  'Waits for, then holds until the transaction ends, the lock that puts the device writes of user p_user_id in turn (session starts run one at a time per user). EXECUTE for authenticated (the api function) only.';
revoke all on function app_private.lock_user_devices(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_user_devices(uuid) to authenticated;
