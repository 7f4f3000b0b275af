-- Down step of 20261126002710_ota_build_numbers_unique.sql: the OTA index
-- goes, and the column's comment is again the one of before.
drop index if exists app_private.releases_ota_build_key;
comment on column app_private.releases.build_number is
  'The build number (iOS CFBundleVersion, Android versionCode); "newer" means a higher build number. Unique per (platform, channel) among binaries.';
