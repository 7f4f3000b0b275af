// Access tokens for tests: JWT-shaped, unsigned (the client only reads whose they are).

/** A JWT-shaped token for `sub` (of Supabase session `sessionId`, when given). */
export function tokenOf(sub: string, sessionId?: string): string {
  const part = (value: unknown) => btoa(JSON.stringify(value)).replaceAll("=", "").replaceAll("+", "-").replaceAll("/", "_");
  const session = sessionId === undefined ? {} : { session_id: sessionId };
  return `${part({ alg: "ES256", typ: "JWT" })}.${part({ sub, role: "authenticated", name: "Zoë ~~>?", ...session })}.c2ln`;
}
