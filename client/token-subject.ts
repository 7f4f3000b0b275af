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

/** A non-empty string claim of a JWT's claims, lower-cased (uuids), or null. */
function claim(claims: Record<string, unknown> | null, name: string): string | null {
  const value = claims?.[name];
  return typeof value === "string" && value !== "" ? value.toLowerCase() : null;
}

/** Whose a token is: its `sub` and its Supabase session (`session_id`: it belongs to one account); null for what a JWT lacks. */
export interface TokenIdentity {
  user: string | null;
  session: string | null;
}

/** The `sub` and `session_id` of a JWT, decoded once. */
export function tokenIdentity(token: string): TokenIdentity {
  const claims = claimsOf(token);
  return { user: claim(claims, "sub"), session: claim(claims, "session_id") };
}

/** The `sub` of a JWT, or null for anything else. */
export function tokenSubject(token: string): string | null {
  return tokenIdentity(token).user;
}

/** The `session_id` of a JWT (Supabase Auth's session), or null. */
export function tokenSession(token: string): string | null {
  return tokenIdentity(token).session;
}
