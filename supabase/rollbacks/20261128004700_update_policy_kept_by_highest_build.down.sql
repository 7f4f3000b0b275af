-- Down step of 20261128004700_update_policy_kept_by_highest_build: the column
-- (and its grant) goes; a publish with a policy replaces it whatever its build
-- number again.

alter table app_private.release_update_policies drop column set_by_build_number;
