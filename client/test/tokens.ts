// Access tokens for tests: JWT-shaped, unsigned (the client only reads whose they are).

/** A JWT-shaped token for `sub`. */
export function tokenOf(sub: string): string {
  const part = (value: unknown) => btoa(JSON.stringify(value)).replaceAll("=", "").replaceAll("+", "-").replaceAll("/", "_");
  return `${part({ alg: "ES256", typ: "JWT" })}.${part({ sub, role: "authenticated", name: "Zoë ~~>?" })}.c2ln`;
}
