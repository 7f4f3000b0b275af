-- Down step of 20261128010200_feedback_capped_per_user_and_release.sql: the
-- cap's trigger and functions go, and the two indexes are again those
-- 20261122040100_release_feedback.sql made, with their comments. Feedback the
-- cap refused is not restored (nothing records it).

drop trigger release_feedback_capped on app_private.release_feedback;
drop function app_private.refuse_feedback_over_cap();
drop function app_private.max_feedback_per_user_and_release();

drop index app_private.release_feedback_release_id_idx;
create index release_feedback_release_id_idx on app_private.release_feedback (release_id, created_at);
comment on index app_private.release_feedback_release_id_idx is 'Feedback of one release, oldest first (the release manager''s view; covers the foreign key).';
drop index app_private.release_feedback_user_id_idx;
create index release_feedback_user_id_idx on app_private.release_feedback (user_id);
comment on index app_private.release_feedback_user_id_idx is 'The read policy (own feedback) and the foreign key to auth.users.';
