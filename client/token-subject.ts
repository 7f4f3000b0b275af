// The user an access token names: its `sub` claim, read without verifying
// the token (the server verifies every request; this only tells whose data a
// device's store holds). Supabase Auth's tokens are JWTs.

/** The `sub` of a JWT, or null for anything else. */
export function tokenSubject(token: string): string | null {
  const payload = token.split(".")[1];
  if (!payload) return null;
  try {
    const base64 = payload.replaceAll("-", "+").replaceAll("_", "/");
    const claims = JSON.parse(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="))) as { sub?: unknown };
    return typeof claims.sub === "string" && claims.sub !== "" ? claims.sub.toLowerCase() : null;
  } catch {
    return null;
  }
}
