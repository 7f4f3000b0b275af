-- Down step of 20261128007000_push_tokens_bounded_in_bytes.sql: the bound in characters again
-- (every token within 1024 bytes is within 1024 characters). Tokens the up step cleared stay cleared.
alter table app_private.devices
  drop constraint devices_push_token_length,
  add constraint devices_push_token_length check (char_length(push_token) between 1 and 1024);
