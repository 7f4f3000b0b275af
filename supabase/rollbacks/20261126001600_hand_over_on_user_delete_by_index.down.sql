-- Down step of 20261126001600_hand_over_on_user_delete_by_index.sql.
alter function app_private.hand_over_lists_of_deleted_user() reset enable_seqscan;
