-- Down step of 20261127002320_push_tokens_one_spelling.sql: tokens are
-- compared as written again. The tokens it rewrote stay in their one
-- spelling, which the old rule accepts too.
alter table app_private.devices drop constraint devices_push_token_normalized;
comment on column app_private.devices.push_token is
  'APNs/FCM token; at most one active device holds a given token. Cleared on revocation.';
drop function app_private.normalized_push_token(text, text);
