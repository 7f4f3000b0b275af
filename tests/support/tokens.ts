// Access tokens for tests: the claim builder and signers live in
// scripts/lib/access-tokens.ts (shared with `npm start`).
import { randomUUID } from "node:crypto";

export { LOCAL_ISSUER as TEST_ISSUER, signEs256, signHs256, supabaseClaims, type TokenOptions } from "../../scripts/lib/access-tokens.ts";

export function newIds(): { userId: string; sessionId: string } {
  return { userId: randomUUID(), sessionId: randomUUID() };
}
