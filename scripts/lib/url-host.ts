// The host part of a URL for a server listening on TIDESYNC_HOST. Plain
// TypeScript: the gateway (Deno, scripts/serve-functions.ts) and npm start
// (Node) both use it.

/** An address that listens on every interface, which no client can connect to as such. */
export function isWildcardHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

/** How a URL names a server on `host`: 127.0.0.1 for a wildcard (this machine), brackets around IPv6. */
export function urlHost(host: string): string {
  if (isWildcardHost(host)) return "127.0.0.1";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
