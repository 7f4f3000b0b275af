// Validity of IANA time zone names and BCP 47 language tags, decided by the
// runtime's Intl (ICU) data. The database checks only the shape (its tz data
// and aliases differ), and so do the schemas of answers: a reader's Intl may
// lack a zone the server took (an older ICU on a device).
import { IANA_TIME_ZONE_NAMES } from "./time-zone-names.generated.ts";

/**
 * The shape of a time zone name, the one rule the database checks too
 * (constraints devices_timezone_shape and
 * notification_preferences_quiet_hours_timezone_shape; a test compares them).
 */
export const TIME_ZONE_MAX_LENGTH = 64;
export const TIME_ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;
const SPELLED_NAMES = new Set(IANA_TIME_ZONE_NAMES);

/**
 * A zone or link name of the IANA tz database spelled exactly as there
 * ("Europe/Paris", "Asia/Kolkata", "Japan"; not "europe/paris" or "JAPAN")
 * that Intl knows; no UTC offsets ("+01:00").
 */
export function isIanaTimeZone(value: string): boolean {
  if (value.length > TIME_ZONE_MAX_LENGTH || !TIME_ZONE_SHAPE.test(value)) return false;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  // Intl matches names case-insensitively and answers an alias with ICU's
  // canonical name ("Japan" → "Asia/Tokyo"), so the spelling comes from the
  // tz database's list, or from Intl's list of IANA zones (one newer than the
  // pinned list). Not from what Intl resolves: ICU also knows zones of its own
  // that the tz database lacks ("SystemV/PST8PDT"), and resolves them as named.
  return SPELLED_NAMES.has(value) || (resolved === value && supportedTimeZones().has(value));
}

let supported: Set<string> | undefined;

/** Intl's IANA zones (canonical names only; no ICU-only zones, no aliases). */
function supportedTimeZones(): Set<string> {
  supported ??= new Set(Intl.supportedValuesOf("timeZone"));
  return supported;
}

const LANGUAGE_TAG_SHAPE = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

/** A well-formed BCP 47 language tag ("en", "pt-BR", "zh-Hant-TW"). */
export function isLanguageTag(value: string): boolean {
  if (value.length > 35 || !LANGUAGE_TAG_SHAPE.test(value)) return false;
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}
