// The number literals of a JSON text that a rule about numbers may concern,
// found in one scan of the text that serves both rules: those JSON.parse turns
// into ±Infinity (non-finite-numbers.ts) and those it reads as another number
// (inexact-numbers.ts). Every other literal — at most 15 digits and an
// exponent of at most two — is a finite double that JSON.stringify writes as
// the same number (see inexact-numbers.ts), so a body without a long literal
// (almost every body) costs this scan and nothing more: the walks that say
// where run only when a literal found here breaks a rule.
//
// A number starts the text or follows `:`, `,` or `[` (and whitespace);
// requiring that keeps a uuid such as "…-3e45…" (hex) from matching in almost
// every sync body. Conservative: text inside strings may match too (and is
// then checked for nothing).
// (The text's start is tested on its own: `(?:^|[:,[])` made every body's scan
// ~30% slower.)
const LONG_NUMBER = /[:,[]\s*-?(?:[\d.]{16}|\d+(?:\.\d+)?[eE][+-]?\d{3})/g;
const LONG_NUMBER_FIRST = /^\s*-?(?:[\d.]{16}|\d+(?:\.\d+)?[eE][+-]?\d{3})/;
const LITERAL_AT = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The literals of `text` with at least 16 digits (or 15 and a point) or an exponent of three digits or more. */
export function longNumberLiterals(text: string): string[] {
  const literals: string[] = [];
  const starts = LONG_NUMBER_FIRST.test(text) ? [0] : [];
  for (const match of text.matchAll(LONG_NUMBER)) starts.push(match.index + 1);
  for (let start of starts) {
    while (text[start] === " " || text[start] === "\t" || text[start] === "\n" || text[start] === "\r") start++;
    LITERAL_AT.lastIndex = start;
    const literal = LITERAL_AT.exec(text); // none for a run of points in a string (":.................")
    if (literal) literals.push(literal[0]);
  }
  return literals;
}
