// isIanaTimeZone: the one spelling rule of time zones (quiet hours, devices).
// Every name of the tz database that Intl knows is accepted as spelled there,
// aliases included, and refused in any other case; so is every zone Intl lists.
import { describe, expect, it } from "vitest";
import { isIanaTimeZone } from "../../functions/_shared/locale-and-time-zone.ts";
import { IANA_TIME_ZONE_NAMES } from "../../functions/_shared/time-zone-names.generated.ts";

function intlKnows(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

describe("isIanaTimeZone", () => {
  const listed = new Set(IANA_TIME_ZONE_NAMES);
  const known = IANA_TIME_ZONE_NAMES.filter(intlKnows);

  it("accepts every name of the tz database as spelled there, aliases included, and every zone Intl lists", () => {
    expect(known.length).toBeGreaterThan(500);
    expect(known.filter((name) => !isIanaTimeZone(name))).toEqual([]);
    expect(Intl.supportedValuesOf("timeZone").filter((name) => !isIanaTimeZone(name))).toEqual([]);
  });

  it("refuses every other case of them", () => {
    const otherCases = known.flatMap((name) => [name.toUpperCase(), name.toLowerCase()]).filter((v) => !listed.has(v));
    expect(otherCases).toContain("JAPAN");
    expect(otherCases.filter(isIanaTimeZone)).toEqual([]);
  });

  it("refuses offsets, names Intl does not know and ICU's own abbreviations", () => {
    for (const value of ["+02:00", "UTC+1", "Europe/Atlantis", "Factory", "PST", "IST", ""]) expect(isIanaTimeZone(value), value).toBe(false);
  });

  it("refuses ICU's own zones, which Intl resolves as named but the tz database lacks", () => {
    for (const value of ["SystemV/AST4", "SystemV/EST5EDT", "SystemV/PST8PDT", "SystemV/YST9YDT"]) {
      expect(intlKnows(value), value).toBe(true);
      expect(listed.has(value), value).toBe(false);
      expect(isIanaTimeZone(value), value).toBe(false);
    }
  });
});
