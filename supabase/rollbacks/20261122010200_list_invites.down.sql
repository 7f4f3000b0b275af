-- Down step of 20261122010200_list_invites.sql.
drop function if exists public.accept_list_invite(text);
drop function if exists app_private.redeem_list_invite(text);
drop function if exists public.create_list_invite(uuid, text, interval);
drop table if exists app_private.list_invites;
