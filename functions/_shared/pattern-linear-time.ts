// Whether a pattern of the portable subset (portable-pattern.ts) runs in time
// linear in the value's length in a backtracking engine (V8, JavaScriptCore,
// Hermes: the push and every client), so that no value can hold the event loop.
//
// Why the rules are enough. A backtracking engine walks the pattern's atoms
// (characters and bracket expressions), taking at each choice (an
// alternative, one more round of a repetition or not) the first way, and
// coming back for the others when a later step fails. Read the pattern as its
// atoms and, for each atom, the atoms that may match the next character
// (Glushkov's construction; a counted repetition read as `*` or `+`, which
// only adds ways, so a pattern passing with them passes with the counts).
// When no two of those match a same character and no atom is reached two
// ways, then at every character of the value at most one way goes on and
// every other fails before the next character: a try costs the characters it
// reads times a factor of the pattern's size, never more (no way is tried
// twice from the same place). A repetition of something that may match
// nothing would be a way that reads nothing and comes round again, so its
// body must read a character. An alternative without `^` is tried at every
// character of the value: a try of at most MAX_TRY characters (the last
// repetition counted at its minimum, as a try that reaches it has matched)
// keeps the whole test at most MAX_TRY times the value's length.
import type { CodePointRange, PatternNode } from "./portable-pattern.ts";

/** Characters a try of an alternative not starting with `^` may read before it fails. */
const MAX_TRY = 16;

/** Where a match may go next: an atom's index (or END), with the number of ways to get there (2 means two or more). */
type Ways = Map<number, number>;

/** The end of the pattern (a match). */
const END = -1;

/** A part of a pattern: how many ways it matches nothing, and the atoms that may match its first and its last character. */
interface Part {
  empty: number;
  first: Ways;
  last: Ways;
}

export function runsInLinearTime(pattern: PatternNode): boolean {
  return decidedByNextCharacter(pattern) && shortTries(pattern);
}

/** Whether at every point of a match at most one way goes on with each character, and no repetition may match nothing. */
function decidedByNextCharacter(pattern: PatternNode): boolean {
  const atoms: CodePointRange[][] = [];
  const follow: Ways[] = [];
  let repeatsNothing = false;

  const link = (from: Ways, to: Ways) => {
    for (const [atom, ways] of from) {
      for (const [next, more] of to) add(follow[atom], next, ways * more);
    }
  };

  const part = (node: PatternNode): Part => {
    switch (node.kind) {
      case "chars": {
        const atom = atoms.push(node.ranges) - 1;
        follow.push(new Map());
        return { empty: 0, first: new Map([[atom, 1]]), last: new Map([[atom, 1]]) };
      }
      case "anchor": // it reads nothing; it may only end a way, never add one
        return { empty: 1, first: new Map(), last: new Map() };
      case "group": {
        const alternatives = node.alternatives.map((items) => items.map(part).reduce(sequence, { empty: 1, first: new Map(), last: new Map() }));
        return alternatives.reduce((a, b) => ({ empty: cap(a.empty + b.empty), first: sum(a.first, b.first), last: sum(a.last, b.last) }));
      }
      case "repeat": {
        if (node.max === 0) return { empty: 1, first: new Map(), last: new Map() };
        const body = part(node.body);
        if (node.max === 1) return { ...body, empty: cap(body.empty + (node.min === 0 ? 1 : 0)) };
        if (body.empty > 0) repeatsNothing = true;
        link(body.last, body.first); // one more round
        return { ...body, empty: node.min === 0 ? 1 : 0 };
      }
    }
  };

  const sequence = (a: Part, b: Part): Part => {
    link(a.last, b.first);
    return { empty: cap(a.empty * b.empty), first: sum(a.first, scale(b.first, a.empty)), last: sum(b.last, scale(a.last, b.empty)) };
  };

  const whole = part(pattern);
  const start = sum(whole.first, new Map([[END, whole.empty]]));
  link(whole.last, new Map([[END, 1]]));
  return !repeatsNothing && [start, ...follow].every((next) => oneWayPerCharacter(next, atoms));
}

/** No atom (nor the end) reached two ways, and no two atoms matching a same character. */
function oneWayPerCharacter(next: Ways, atoms: CodePointRange[][]): boolean {
  const ranges: [number, number, number][] = [];
  for (const [atom, ways] of next) {
    if (ways > 1) return false;
    if (atom !== END) for (const [from, to] of atoms[atom]) ranges.push([from, to, atom]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  // An atom's own ranges are disjoint: any range starting within the one before ends another atom's.
  let reach = -1;
  for (const [from, to] of ranges) {
    if (from <= reach) return false;
    reach = Math.max(reach, to);
  }
  return true;
}

/** Whether every alternative not starting with `^` reads at most MAX_TRY characters before a try of it fails or matches. */
function shortTries(pattern: PatternNode): boolean {
  if (pattern.kind !== "group") return true;
  return pattern.alternatives.every((items) => {
    if (items[0]?.kind === "anchor" && items[0].at === "start") return true;
    const length = items.reduce((total, item, i) => total + (i === items.length - 1 && item.kind === "repeat" ? times(item.min, longest(item.body)) : longest(item)), 0);
    return length <= MAX_TRY;
  });
}

/** The most characters `node` matches (Infinity when a repetition has no bound). */
function longest(node: PatternNode): number {
  switch (node.kind) {
    case "chars":
      return 1;
    case "anchor":
      return 0;
    case "group":
      return Math.max(...node.alternatives.map((items) => items.reduce((total, item) => total + longest(item), 0)));
    case "repeat":
      return times(node.max, longest(node.body));
  }
}

/** a × b, where none of nothing is nothing (0 × Infinity is 0). */
function times(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : a * b;
}

function cap(ways: number): number {
  return Math.min(ways, 2);
}

function add(ways: Ways, atom: number, more: number): void {
  if (more > 0) ways.set(atom, cap((ways.get(atom) ?? 0) + more));
}

function sum(a: Ways, b: Ways): Ways {
  const total = new Map(a);
  for (const [atom, ways] of b) add(total, atom, ways);
  return total;
}

function scale(ways: Ways, by: number): Ways {
  return new Map([...ways].filter(() => by > 0).map(([atom, n]) => [atom, cap(n * by)]));
}
