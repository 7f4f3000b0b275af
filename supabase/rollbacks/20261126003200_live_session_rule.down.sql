-- Down step of 20261126003200_live_session_rule.sql: the push senders' view and
-- the session rule go (the api function of the same commit calls it: roll back
-- with the function of before).
drop view app_private.push_targets;
drop function app_private.session_is_live(uuid, uuid);
