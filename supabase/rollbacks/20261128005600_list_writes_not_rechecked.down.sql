-- Down step of 20261128005600_list_writes_not_rechecked: the check goes (npm
-- run generate no longer refuses a list-scoped table without its recheck triggers).

drop function app_private.list_writes_not_rechecked();
