// Test signing keys: generated per run, never stored. The functions get only
// the public JWKS (and an HS256 secret for the legacy path), as in production.
export { createSigningKeys, type SigningKeys } from "../../scripts/lib/signing-keys.ts";
