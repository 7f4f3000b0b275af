// A column's CHECK (col ~ 'pattern') is a Postgres regular expression (ARE),
// and the push and the client test values with a JavaScript RegExp. A pattern
// is tested here only when both of these hold; any other is left to the
// database, which has the last word (a value it refuses is that op's
// `check_failed` on the field).
//
// 1. It means the same in both dialects. They differ: `(?i)`, `[[:upper:]]`,
// `\m`, `\y`, `\A`, back-references and embedded options mean something else
// (or nothing) in JavaScript, `.` matches a newline in Postgres only, `\d` and
// `\w` follow the locale there. So the pattern is written in a small subset
// (with the `u` flag: a character is a code point, as in Postgres): literal
// characters; `\` before a punctuation character (that character); `^`, `$`;
// groups `( )` and `(?: )`; `|`; `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` after
// an atom; bracket expressions of literal characters and ranges
// (`[a-z0-9_-]`, `[^@]`), without `[:class:]`, escapes or a `]` first. Not
// `.`, no other escape, no lazy or possessive quantifier.
//
// 2. JavaScript runs it in time linear in the value's length. Postgres'
// engine never backtracks catastrophically, JavaScript's does: one pushed
// value would hold the function's event loop (every request of that server)
// for seconds or for ever, as `^([a-z]+)+$`, `^(a|aa)*$` or
// `^[a-z]*[a-z]*x$` do on a few dozen characters
// (pattern-linear-time.ts says why each rule is enough):
// - the next character always decides the way on: where the pattern may go
//   on with more than one atom, no two of them match a same character (not
//   `[a-z]+[a-z]*`, `(a|ab)`, `[^@]+\.`), and no atom is reached two ways
//   (not `([a-z]+)+`, `(a|)(b|)c`). A counted repetition is judged as a `*`
//   or `+` whatever its count: `x{2,3}x` is refused like `x+x`;
// - a repeated part matches a character each round (not `(a?)*`, `(a|)+`);
// - an alternative not starting with `^` is tried at every character of the
//   value, so a try must be short: at most 16 characters at its longest, a
//   repetition that ends the alternative counted at its minimum only (a try
//   that reaches it has matched), so `[a-z]+` and `b{2,3}` are in,
//   `[a-z]+x` and `[0-9]{64}` are not (`^[0-9]{64}$` is). Some linear ones
//   are left to the database too (`^[a-z]+[a-z]$`, `^[^@]+@[^@]+\.[a-z]+$`):
//   the rules stay simple rather than exact.

import { runsInLinearTime } from "./pattern-linear-time.ts";

/** The flags a portable pattern is compiled with. */
export const PORTABLE_PATTERN_FLAGS = "u";

/** Code points from..to, both included. */
export type CodePointRange = [number, number];

/** A pattern of the subset, parsed: its top-level alternatives are a group's. */
export type PatternNode =
  | { kind: "chars"; ranges: CodePointRange[] } // one character of these (sorted, disjoint)
  | { kind: "anchor"; at: "start" | "end" }
  | { kind: "group"; alternatives: PatternNode[][] }
  | { kind: "repeat"; body: PatternNode; min: number; max: number }; // max: Infinity for *, +, {n,}

/** Characters a `\` may escape, in both dialects and in a JavaScript `u` pattern (outside brackets). */
const ESCAPABLE = new Set("^$\\.*+?()[]{}|/");
/** Characters that are not literal outside a bracket expression in either dialect. */
const SPECIAL = new Set("^$\\.*+?()[]{}|");
/** Postgres' largest repetition count (RE_DUP_MAX). */
const MAX_REPEAT = 255;
/** The largest code point. */
const MAX_CODE_POINT = 0x10ffff;

/** Whether `pattern` is in the subset that means the same in Postgres and JavaScript, and runs in linear time in JavaScript. */
export function isPortablePattern(pattern: string): boolean {
  const parsed = parsePattern(pattern);
  return parsed !== undefined && runsInLinearTime(parsed);
}

/** The RegExp testing what `pattern` tests in Postgres, or undefined when it is not portable (the database checks it). */
export function portablePattern(pattern: string): RegExp | undefined {
  if (!isPortablePattern(pattern)) return undefined;
  try {
    return new RegExp(pattern, PORTABLE_PATTERN_FLAGS);
  } catch {
    return undefined;
  }
}

/** `pattern` parsed as a group of its top-level alternatives, or undefined when it is not written in the subset. */
export function parsePattern(pattern: string): PatternNode | undefined {
  const chars = [...pattern]; // code points
  let i = 0;

  /** Alternatives up to a `)` or the end (not consumed). */
  function alternatives(): PatternNode[][] | undefined {
    const found: PatternNode[][] = [];
    for (;;) {
      const items = sequence();
      if (!items) return undefined;
      found.push(items);
      if (chars[i] !== "|") return found;
      i++;
    }
  }

  function sequence(): PatternNode[] | undefined {
    const items: PatternNode[] = [];
    while (i < chars.length && chars[i] !== "|" && chars[i] !== ")") {
      const c = chars[i];
      if (c === "^" || c === "$") {
        i++;
        items.push({ kind: "anchor", at: c === "^" ? "start" : "end" });
        if (isQuantifier(chars[i])) return undefined; // ^* is no atom repeated
        continue;
      }
      let item = atom();
      if (!item) return undefined;
      if (isQuantifier(chars[i])) {
        const bound = quantifier();
        if (!bound || isQuantifier(chars[i])) return undefined; // no a** nor lazy a*?
        item = { kind: "repeat", body: item, ...bound };
      }
      items.push(item);
    }
    return items;
  }

  function atom(): PatternNode | undefined {
    const c = chars[i];
    if (c === "\\") {
      const escaped = chars[i + 1] ?? "";
      if (!ESCAPABLE.has(escaped)) return undefined;
      i += 2;
      return single(escaped);
    }
    if (c === "[") {
      const bracket = bracketExpression(chars, i);
      if (!bracket) return undefined;
      i = bracket.end + 1;
      return { kind: "chars", ranges: bracket.ranges };
    }
    if (c === "(") {
      if (chars[i + 1] === "?") {
        if (chars[i + 2] !== ":") return undefined;
        i += 2;
      }
      i++;
      const inside = alternatives();
      if (!inside || chars[i] !== ")") return undefined;
      i++;
      return { kind: "group", alternatives: inside };
    }
    if (SPECIAL.has(c)) return undefined; // `.`, a quantifier with no atom, a `]` or `}` on its own
    i++;
    return single(c);
  }

  function quantifier(): { min: number; max: number } | undefined {
    const c = chars[i];
    if (c !== "{") {
      i++;
      return c === "*" ? { min: 0, max: Infinity } : c === "+" ? { min: 1, max: Infinity } : { min: 0, max: 1 };
    }
    const bound = /^\{(\d{1,3})(,(\d{1,3})?)?\}/.exec(chars.slice(i, i + 9).join(""));
    if (!bound) return undefined;
    const min = Number(bound[1]);
    const max = bound[2] === undefined ? min : bound[3] === undefined ? Infinity : Number(bound[3]);
    if (min > MAX_REPEAT || (max !== Infinity && (max > MAX_REPEAT || max < min))) return undefined;
    i += bound[0].length;
    return { min, max };
  }

  const top = alternatives();
  if (!top || i < chars.length) return undefined; // a `)` with no `(`
  return { kind: "group", alternatives: top };
}

function isQuantifier(c: string | undefined): boolean {
  return c === "*" || c === "+" || c === "?" || c === "{";
}

function single(c: string): PatternNode {
  const code = c.codePointAt(0)!;
  return { kind: "chars", ranges: [[code, code]] };
}

/**
 * The bracket expression opened at `start`, or undefined when it is not one of the subset:
 * literal characters and ranges between them, `-` first or last, `^` first.
 */
function bracketExpression(chars: string[], start: number): { end: number; ranges: CodePointRange[] } | undefined {
  let i = start + 1;
  const negated = chars[i] === "^";
  if (negated) i++;
  const first = i;
  const ranges: CodePointRange[] = [];
  let previous: string | undefined; // the last single character, which may start a range
  while (i < chars.length && chars[i] !== "]") {
    const c = chars[i];
    if (c === "[" || c === "\\") return undefined; // [:alpha:], [=a=], [.a.], escapes
    if (c === "-" && i !== first && chars[i + 1] !== "]") {
      const to = chars[i + 1];
      if (previous === undefined || to === undefined || to === "[" || to === "\\" || to === "-" || to.codePointAt(0)! < previous.codePointAt(0)!) return undefined;
      ranges[ranges.length - 1] = [previous.codePointAt(0)!, to.codePointAt(0)!];
      previous = undefined; // a range ends here: no a-c-e
      i += 2;
      continue;
    }
    ranges.push([c.codePointAt(0)!, c.codePointAt(0)!]);
    previous = c;
    i++;
  }
  // An empty bracket expression, or a `]` first (a literal in Postgres, the end in JavaScript).
  if (i === first || i >= chars.length) return undefined;
  const merged = mergeRanges(ranges);
  return { end: i, ranges: negated ? complement(merged) : merged };
}

/** `ranges` sorted, overlapping and touching ones merged. */
function mergeRanges(ranges: CodePointRange[]): CodePointRange[] {
  const merged: CodePointRange[] = [];
  for (const [from, to] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const last = merged[merged.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged;
}

/** Every code point not in `ranges` (sorted, disjoint). */
function complement(ranges: CodePointRange[]): CodePointRange[] {
  const rest: CodePointRange[] = [];
  let next = 0;
  for (const [from, to] of ranges) {
    if (from > next) rest.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) rest.push([next, MAX_CODE_POINT]);
  return rest;
}
