-- Down step of 20261122030100_rate_limit_counters_unlogged.sql.
alter table app_private.rate_limit_counters set logged;
comment on table app_private.rate_limit_counters is 'Requests per user, operation and fixed time window; written by the api function, purged after the window.';
