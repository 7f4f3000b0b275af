-- A push token is bounded in bytes, not characters (hostile review): the unique index
-- devices_active_push_token_key holds at most ~2,700 bytes per entry, and a token of 1,024
-- characters of CJK text (3 bytes each) passed both the API's schema and the old check
-- (char_length), then failed the insert (54000: a retryable 500). Real tokens are ASCII (APNs hex,
-- FCM base64url), far below 1,024 bytes; the API's schema holds the same bound
-- (MAX_PUSH_TOKEN_BYTES, functions/_shared/schemas/devices.ts).
--
-- A stored token over the bound (at most ~2,700 bytes, or its row could not have been written)
-- cannot be one a provider issued: it is cleared, as a sign-out clears one (the device keeps its
-- session; the app registers its token again on its next session start).
update app_private.devices set push_token = null, push_provider = null where octet_length(push_token) > 1024;

alter table app_private.devices
  drop constraint devices_push_token_length,
  add constraint devices_push_token_length check (octet_length(push_token) between 1 and 1024);
comment on constraint devices_push_token_length on app_private.devices is
  'At most 1024 bytes (UTF-8): every token fits the unique index devices_active_push_token_key; the API refuses longer ones first (MAX_PUSH_TOKEN_BYTES).';
