// Validity of IANA time zone names and BCP 47 language tags, decided by the
// runtime's Intl (ICU) data, so the api function and the client agree. The
// database checks only the shape (its tz data and aliases differ).

const TIME_ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/**
 * An IANA zone name Intl knows, spelled with its canonical case
 * ("Europe/Paris", not "europe/paris"); no UTC offsets ("+01:00").
 */
export function isIanaTimeZone(value: string): boolean {
  if (value.length > 64 || !TIME_ZONE_SHAPE.test(value)) return false;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  // Intl matches case-insensitively; accept only the canonical spelling, but
  // keep aliases ("Asia/Calcutta") that resolve to another name.
  return resolved === value || resolved.toLowerCase() !== value.toLowerCase();
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
