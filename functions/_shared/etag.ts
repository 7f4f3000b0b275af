// Versions as HTTP entity tags, for documents served with ETag and replaced
// with If-Match (RFC 9110 §8.8.3, §13.1.1). Shared by the api function and
// the client. A version is served as a strong tag: "7".

export function versionEtag(version: number): string {
  return `"${version}"`;
}

/**
 * What an If-Match header asks for: "any" (absent or `*`: no precondition) or
 * the versions it lists. Strong comparison: weak tags (W/"7") and tags that
 * are not a version never match, so they make the precondition fail (412),
 * as RFC 9110 says for a list that matches nothing. A header present but
 * empty or blank lists nothing, so it fails too: it is what a client sends
 * for an ETag it never read, and taking it for "no precondition" would let
 * that write undo another device's. A bare 7 (unquoted, a common client
 * mistake) is read as "7". A version is spelled as served, so "01" or "+1"
 * is another tag than "1" and matches nothing.
 */
export function parseIfMatch(header: string | undefined): "any" | number[] {
  if (header === undefined || header.trim() === "*") return "any";
  const versions: number[] = [];
  for (const raw of header.split(",")) {
    const tag = raw.trim();
    const match = /^"(0|[1-9]\d{0,9})"$/.exec(tag) ?? /^(0|[1-9]\d{0,9})$/.exec(tag);
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}

export function ifMatchAccepts(condition: "any" | number[], currentVersion: number): boolean {
  return condition === "any" || condition.includes(currentVersion);
}
