// parseIfMatch: an If-Match header matches a version only when it names it
// as served ("7", or the bare 7); any other spelling of the number is another
// entity tag and matches nothing (412).
import { describe, expect, it } from "vitest";
import { ifMatchAccepts, parseIfMatch, versionEtag } from "../../functions/_shared/etag.ts";

describe("parseIfMatch", () => {
  it("reads the served tags, bare versions and lists", () => {
    expect(parseIfMatch(versionEtag(0))).toEqual([0]);
    expect(parseIfMatch('"1"')).toEqual([1]);
    expect(parseIfMatch("7")).toEqual([7]);
    expect(parseIfMatch(' "2", "10" ')).toEqual([2, 10]);
    expect(parseIfMatch('"2147483647"')).toEqual([2147483647]);
    expect(parseIfMatch(undefined)).toBe("any");
    expect(parseIfMatch(" * ")).toBe("any");
  });

  it("an If-Match present but empty or blank names no version: it matches nothing (only absent or * is unconditional)", () => {
    for (const header of ["", " ", "\t", ",", " , "]) {
      expect(parseIfMatch(header), JSON.stringify(header)).toEqual([]);
      expect(ifMatchAccepts(parseIfMatch(header), 0), JSON.stringify(header)).toBe(false);
    }
  });

  it("matches nothing for another spelling of a version: leading zeros, signs, weak tags", () => {
    for (const header of ['"01"', "01", '"00"', '"007"', '"+1"', "-1", 'W/"1"', '"1.0"', '"1e0"', '"12345678901"']) {
      expect(parseIfMatch(header), header).toEqual([]);
      expect(ifMatchAccepts(parseIfMatch(header), 1), header).toBe(false);
    }
    expect(ifMatchAccepts(parseIfMatch('"01", "2"'), 1)).toBe(false);
    expect(ifMatchAccepts(parseIfMatch('"01", "1"'), 1)).toBe(true);
  });
});
