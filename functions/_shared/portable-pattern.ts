// A column's CHECK (col ~ 'pattern') is a Postgres regular expression (ARE),
// and the push and the client test values with a JavaScript RegExp. The two
// dialects differ: `(?i)`, `[[:upper:]]`, `\m`, `\y`, `\A`, back-references
// and embedded options mean something else (or nothing) in JavaScript, `.`
// matches a newline in Postgres only, `\d` and `\w` follow the locale there.
// So a pattern is used here only when it is written in a small subset that
// means the same in both (with the `u` flag: a character is a code point, as
// in Postgres); any other is left to the database, which has the last word.
//
// The subset: literal characters; `\` before a punctuation character (that
// character); `^`, `$`; groups `( )` and `(?: )`; `|`; `*`, `+`, `?`, `{n}`,
// `{n,}`, `{n,m}` after an atom; bracket expressions of literal characters
// and ranges (`[a-z0-9_-]`, `[^@]`), without `[:class:]`, escapes or a `]`
// first. Not `.`, no other escape, no lazy or possessive quantifier.

/** The flags a portable pattern is compiled with. */
export const PORTABLE_PATTERN_FLAGS = "u";

/** Characters a `\` may escape, in both dialects and in a JavaScript `u` pattern (outside brackets). */
const ESCAPABLE = new Set("^$\\.*+?()[]{}|/");
/** Characters that are not literal outside a bracket expression in either dialect. */
const SPECIAL = new Set("^$\\.*+?()[]{}|");
/** Postgres' largest repetition count (RE_DUP_MAX). */
const MAX_REPEAT = 255;

/** Whether `pattern` is in the subset that means the same in Postgres and JavaScript. */
export function isPortablePattern(pattern: string): boolean {
  const chars = [...pattern]; // code points
  let i = 0;
  let depth = 0;
  let quantifiable = false; // the previous token is an atom a quantifier may follow
  while (i < chars.length) {
    const c = chars[i];
    if (c === "\\") {
      if (!ESCAPABLE.has(chars[i + 1] ?? "")) return false;
      i += 2;
      quantifiable = true;
    } else if (c === "[") {
      const end = bracketEnd(chars, i);
      if (end < 0) return false;
      i = end + 1;
      quantifiable = true;
    } else if (c === "(") {
      if (chars[i + 1] === "?") {
        if (chars[i + 2] !== ":") return false;
        i += 2;
      }
      i++;
      depth++;
      quantifiable = false;
    } else if (c === ")") {
      if (depth === 0) return false;
      depth--;
      i++;
      quantifiable = true;
    } else if (c === "*" || c === "+" || c === "?" || c === "{") {
      if (!quantifiable) return false;
      if (c === "{") {
        const bound = /^\{(\d{1,3})(,(\d{1,3})?)?\}/.exec(chars.slice(i, i + 9).join(""));
        if (!bound) return false;
        const min = Number(bound[1]);
        const max = bound[3] === undefined ? min : Number(bound[3]);
        if (min > MAX_REPEAT || max > MAX_REPEAT || (bound[3] !== undefined && max < min)) return false;
        i += bound[0].length;
      } else {
        i++;
      }
      quantifiable = false; // no a** nor lazy a*?
    } else if (c === "^" || c === "$" || c === "|") {
      i++;
      quantifiable = false;
    } else if (SPECIAL.has(c)) {
      return false; // `.`, a `]` or `}` on its own
    } else {
      i++;
      quantifiable = true;
    }
  }
  return depth === 0;
}

/**
 * The index of the `]` closing the bracket expression opened at `start`, or -1 when it is not
 * one of the subset: literal characters and ranges between them, `-` first or last, `^` first.
 */
function bracketEnd(chars: string[], start: number): number {
  let i = start + 1;
  if (chars[i] === "^") i++;
  const first = i;
  let previous: string | undefined; // the last single character, which may start a range
  while (i < chars.length && chars[i] !== "]") {
    const c = chars[i];
    if (c === "[" || c === "\\") return -1; // [:alpha:], [=a=], [.a.], escapes
    if (c === "-" && i !== first && chars[i + 1] !== "]") {
      const to = chars[i + 1];
      if (previous === undefined || to === "[" || to === "\\" || to === "-" || to.codePointAt(0)! < previous.codePointAt(0)!) return -1;
      previous = undefined; // a range ends here: no a-c-e
      i += 2;
      continue;
    }
    previous = c;
    i++;
  }
  // An empty bracket expression, or a `]` first (a literal in Postgres, the end in JavaScript).
  if (i === first || i >= chars.length) return -1;
  return i;
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
