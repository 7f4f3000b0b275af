-- What: a push token is stored in one spelling: no surrounding whitespace
-- (what String.prototype.trim removes, app_private.trim_display_name's
-- definition), and an APNs token with ASCII letters in lower case. The rule
-- is app_private.normalized_push_token(token, provider); the check constraint
-- devices_push_token_normalized refuses any other spelling (23514), so a
-- direct write cannot store one; deviceRegistrationSchema
-- (functions/_shared/schemas/devices.ts, normalizedPushToken) writes the same
-- spelling before the session start stores it. FCM tokens are case-sensitive
-- and only trimmed.
-- Why: tokens were compared as raw text (the unique index
-- devices_active_push_token_key), so one phone's APNs token sent as
-- "abc…", "ABC…" and " abc…" by three users was held by three active devices:
-- three push targets for one phone, the earlier users' notifications reaching
-- the phone's current user. Registering it in any spelling now detaches it
-- from the device that held it.
-- Tokens already stored are rewritten in that spelling; where two active
-- devices held one token in different spellings, the one that registered it
-- last keeps it (the app sends it again at its next session start).
-- tests/integration/push-token-spelling.test.ts; pgTAP 301-devices.
-- Rollback: supabase/rollbacks/20261127002320_push_tokens_one_spelling.down.sql
-- (the rewritten tokens stay as they are).

create function app_private.normalized_push_token(p_push_token text, p_push_provider text)
returns text
language sql
immutable
parallel safe
security invoker
set search_path = ''
as $$
  select case when p_push_provider = 'apns'
              then pg_catalog.translate(t.token, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
              else t.token end
    from (select app_private.trim_display_name(p_push_token) as token) t
$$;
comment on function app_private.normalized_push_token(text, text) is
  'The one spelling of push token p_push_token of provider p_push_provider: without surrounding whitespace (app_private.trim_display_name: what String.prototype.trim removes); an APNs token (hex, either case) with ASCII A-Z lower-cased; an FCM token (case-sensitive) otherwise unchanged. Used by the check constraint devices_push_token_normalized; normalizedPushToken in functions/_shared/schemas/devices.ts is the same rule (tests/integration/push-token-spelling.test.ts).';
-- The check constraint calls it as the writing role (authenticated); it only
-- transforms its arguments.
revoke all on function app_private.normalized_push_token(text, text) from public, anon, authenticated, service_role;
grant execute on function app_private.normalized_push_token(text, text) to authenticated;

-- Two active devices holding one token in different spellings: the latest
-- registration keeps it; a token of whitespace only is none.
with spelled as (
  select d.id,
         app_private.normalized_push_token(d.push_token, d.push_provider) as token,
         d.push_token_updated_at, d.last_seen_at
    from app_private.devices d
   where d.push_token is not null
), ranked as (
  select s.id, s.token,
         row_number() over (partition by s.token
                            order by s.push_token_updated_at desc nulls last, s.last_seen_at desc, s.id) as nth
    from spelled s
)
update app_private.devices d
   set push_token = null, push_provider = null
  from ranked r
 where r.id = d.id and (r.nth > 1 or r.token = '');

update app_private.devices d
   set push_token = app_private.normalized_push_token(d.push_token, d.push_provider)
 where d.push_token <> app_private.normalized_push_token(d.push_token, d.push_provider);

alter table app_private.devices
  add constraint devices_push_token_normalized
  check (push_token = app_private.normalized_push_token(push_token, push_provider));
comment on constraint devices_push_token_normalized on app_private.devices is
  'A push token is stored in its one spelling (app_private.normalized_push_token), so the unique index devices_active_push_token_key sees one phone''s token as one.';
comment on column app_private.devices.push_token is
  'APNs/FCM token, in its one spelling (devices_push_token_normalized: trimmed, APNs lower-cased); at most one active device holds a given token. Cleared on revocation.';
