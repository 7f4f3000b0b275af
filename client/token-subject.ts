// The user an access token names: its `sub` claim, read without verifying
// the token (the server verifies every request; this only tells whose data a
// device's store holds), and its Supabase session (`session_id`). Supabase
// Auth's tokens are JWTs.

/** The claims of a JWT's payload, or null for anything else. */
function claimsOf(token: string): Record<string, unknown> | null {
  const payload = token.split(".")[1];
  if (!payload) return null;
  try {
    const base64 = payload.replaceAll("-", "+").replaceAll("_", "/");
    const claims = JSON.parse(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="))) as unknown;
    return typeof claims === "object" && claims !== null ? claims as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/** A non-empty string claim of a JWT, lower-cased (uuids), or null. */
function claim(token: string, name: string): string | null {
  const value = claimsOf(token)?.[name];
  return typeof value === "string" && value !== "" ? value.toLowerCase() : null;
}

/** The `sub` of a JWT, or null for anything else. */
export function tokenSubject(token: string): string | null {
  return claim(token, "sub");
}

/** The `session_id` of a JWT (Supabase Auth's session: it belongs to one account), or null. */
export function tokenSession(token: string): string | null {
  return claim(token, "session_id");
}
