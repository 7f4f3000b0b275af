// Time zone spellings both routes that take one (quiet hours, a device's
// zone) must answer alike: a zone or link name of the IANA tz database is
// accepted exactly as spelled there, aliases included; any other case is
// unknown_timezone (functions/_shared/locale-and-time-zone.ts), and so is a
// zone only ICU knows (SystemV/*: in neither the tz database nor Postgres).
export const ACCEPTED_TIME_ZONES = ["Asia/Tokyo", "Japan", "US/Pacific", "CET", "GMT0", "UTC", "Etc/UTC", "Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv"];
export const REFUSED_TIME_ZONES = ["JAPAN", "japan", "us/pacific", "cet", "gmt0", "utc", "asia/calcutta", "asia/tokyo", "PST", "SystemV/PST8PDT", "SystemV/YST9YDT"];
