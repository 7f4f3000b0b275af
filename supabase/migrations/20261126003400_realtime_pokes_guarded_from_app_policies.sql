-- What: tidesync's Realtime topics (tidesync:scope:<id>, tidesync:user:<id>)
-- stay members-only and database-only whatever policies the app adds on
-- realtime.messages. The policy of 20261122060100 is permissive, and
-- permissive policies OR together: an app using Broadcast itself, with the
-- policies Supabase's Realtime Authorization guide shows ("for select to
-- authenticated using (true)", "for insert to authenticated with check
-- (true)"), let any signed-in user join and send on every list's and user's
-- topic. Restrictive policies AND with everything else, so these decide the
-- tidesync: topics alone:
--   receiving: a tidesync: row (or a channel whose realtime.topic() is
--     tidesync's) is visible only to authenticated, only when the row's topic
--     is realtime.topic() and app_private.may_receive_poke says yes;
--   sending: no API role inserts or updates a row of a tidesync: topic, nor
--     inserts with realtime.topic() set to one (Realtime's client-broadcast
--     check). Other topics are left to the app's own policies.
-- The pokes still go out: app_private.send_sync_pokes() is SECURITY DEFINER,
-- owned by the migration role, and RLS does not apply to it. On Supabase that
-- is `postgres`, which has BYPASSRLS (supabase/postgres
-- migrations/db/migrations/10000000000000_demote-postgres.sql: "ALTER ROLE
-- postgres NOSUPERUSER ... BYPASSRLS"); the stand-in's owner role has
-- BYPASSRLS too and is a member of supabase_realtime_admin, the table's owner
-- (docs/supabase-standin.md). 601-realtime-pokes.test.sql pins a member's
-- write poking with the app's policies present.
-- Also: the members' policy compared realtime.topic() only, never the row's
-- topic, so with realtime.topic() naming a topic the caller may join every
-- broadcast row was visible, other users' pokes and the app's messages
-- included. realtime.send() does SET LOCAL realtime.topic and so left it set
-- for the rest of the transaction of anyone whose write poked. The policy now
-- also requires topic = realtime.topic().
-- Rollback: supabase/rollbacks/20261126003400_realtime_pokes_guarded_from_app_policies.down.sql

alter policy "Members receive the sync pokes of their lists and their own"
  on realtime.messages
  using (extension = 'broadcast'
         and topic = (select realtime.topic())
         and (select app_private.may_receive_poke((select realtime.topic()))));
comment on policy "Members receive the sync pokes of their lists and their own" on realtime.messages is
  'Realtime checks this as the joining user with realtime.topic() = the channel topic: members of a list may join tidesync:scope:<list id>, each user tidesync:user:<own id>; a row is visible only on its own topic. Pokes carry no data; other topics are left to other policies.';

-- Two policies for receiving: may_receive_poke is executable by authenticated
-- only, and a policy naming it for every role would fail every read of anon
-- (permission denied) as soon as the app lets anon read any topic. Both check
-- the row's topic and realtime.topic(), so neither a row nor a channel of
-- tidesync's slips through.
create policy "Only signed-in users receive on tidesync's topics"
  on realtime.messages
  as restrictive
  for select
  to public
  using (
    case
      when topic like 'tidesync:%' or (select realtime.topic()) like 'tidesync:%'
        then current_user = 'authenticated'
      else true
    end
  );
comment on policy "Only signed-in users receive on tidesync's topics" on realtime.messages is
  'Restrictive, so an app''s own Broadcast policies (e.g. select using (true)) cannot open tidesync: topics to anon or any other role: a row or channel of tidesync:scope:/tidesync:user: is visible to authenticated only. Other topics: the app''s policies decide.';

create policy "Only members receive tidesync's pokes, each on its own topic"
  on realtime.messages
  as restrictive
  for select
  to authenticated
  using (
    case
      when topic like 'tidesync:%' or (select realtime.topic()) like 'tidesync:%'
        then topic = (select realtime.topic()) and (select app_private.may_receive_poke((select realtime.topic())))
      else true
    end
  );
comment on policy "Only members receive tidesync's pokes, each on its own topic" on realtime.messages is
  'Restrictive, so an app''s own Broadcast policies cannot open tidesync: topics to strangers: a row or channel of tidesync:scope:/tidesync:user: is visible only on its own topic (= realtime.topic()) and when app_private.may_receive_poke says the caller may join it. Other topics: the app''s policies decide.';

create policy "Only the database sends on tidesync's topics"
  on realtime.messages
  as restrictive
  for insert
  to public
  with check (topic not like 'tidesync:%' and coalesce((select realtime.topic()), '') not like 'tidesync:%');
comment on policy "Only the database sends on tidesync's topics" on realtime.messages is
  'Restrictive: no API role inserts a message on a tidesync: topic, nor with realtime.topic() set to one (a client broadcast on the channel), whatever insert policies the app has. The pokes come from app_private.send_sync_pokes(), whose owner bypasses RLS.';

create policy "Nobody rewrites tidesync's sync pokes"
  on realtime.messages
  as restrictive
  for update
  to public
  using (topic not like 'tidesync:%')
  with check (topic not like 'tidesync:%');
comment on policy "Nobody rewrites tidesync's sync pokes" on realtime.messages is
  'Restrictive: no API role updates a message of a tidesync: topic or moves one onto it, whatever update policies the app has.';
