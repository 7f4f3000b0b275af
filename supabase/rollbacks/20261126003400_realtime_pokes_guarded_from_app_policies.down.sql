-- Down step of 20261126003400_realtime_pokes_guarded_from_app_policies.sql:
-- the members' policy of 20261122060100 comes back (realtime.topic() only),
-- without the restrictive guards.
drop policy "Nobody rewrites tidesync's sync pokes" on realtime.messages;
drop policy "Only the database sends on tidesync's topics" on realtime.messages;
drop policy "Only members receive tidesync's pokes, each on its own topic" on realtime.messages;
drop policy "Only signed-in users receive on tidesync's topics" on realtime.messages;
alter policy "Members receive the sync pokes of their lists and their own"
  on realtime.messages
  using (extension = 'broadcast' and (select app_private.may_receive_poke((select realtime.topic()))));
comment on policy "Members receive the sync pokes of their lists and their own" on realtime.messages is
  'Realtime checks this as the joining user with realtime.topic() = the channel topic: members of a list may join tidesync:scope:<list id>, each user tidesync:user:<own id>. Pokes carry no data; other topics are left to other policies.';
