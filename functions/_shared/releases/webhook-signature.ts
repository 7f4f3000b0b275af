// Standard Webhooks (standardwebhooks.com) signature verification, as CI signs
// its requests: `webhook-signature: v1,<base64 HMAC-SHA256>` over
// `<webhook-id>.<webhook-timestamp>.<payload>` with the shared `whsec_…`
// secret. The payload is the request itself, `<METHOD> <target>\n<body>`
// (requestLine), so a signature is good for that request only: another
// release, method or query needs another one (docs/test-builds.md). Plain
// WebCrypto, so the function (Deno) and the tests (Node) run this file.

/** How far webhook-timestamp may be from the server's clock (either way), in seconds. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;
const SECRET_PREFIX = "whsec_";
/** The shortest secret key we accept, in bytes (Standard Webhooks recommends 24-64). */
export const MIN_WEBHOOK_SECRET_BYTES = 24;

export interface WebhookHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

export type WebhookVerdict =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: "missing_headers" | "bad_timestamp" | "stale_timestamp" | "bad_signature" };

/** What the headers alone decide, before the payload is known. */
export type WebhookHeadersVerdict = { ok: true } | Exclude<WebhookVerdict, { ok: true }>;

function base64ToBytes(text: string): Uint8Array | null {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/** The HMAC key of a `whsec_<base64>` secret; throws on a malformed or short one (configuration). */
export function decodeWebhookSecret(secret: string): Uint8Array {
  const bytes = base64ToBytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!bytes || bytes.length < MIN_WEBHOOK_SECRET_BYTES) {
    throw new Error(`the webhook secret must be whsec_ followed by at least ${MIN_WEBHOOK_SECRET_BYTES} base64-encoded random bytes`);
  }
  return bytes;
}

/** Same length and same bytes, in time that depends only on the length. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

const ID_SHAPE = /^[\x21-\x7e]{1,255}$/;
/** Bytes of an HMAC-SHA256. */
const MAC_BYTES = 32;

/** A `v1,<base64>` candidate of the signature header that decodes to a MAC's length: the only kind that can match (verifyWebhook's reading). */
function mayMatch(candidate: string): boolean {
  const [version, value] = candidate.split(",", 2);
  return version === "v1" && !!value && base64ToBytes(value)?.length === MAC_BYTES;
}

/**
 * The refusals the headers decide on their own: the three headers present,
 * the id and timestamp well-formed, the timestamp within the tolerance, and
 * at least one signature of the shape that can match. The function checks
 * this before it reads the body (a request refused here costs no body read);
 * verifyWebhook checks it again with the same clock reading and the same answer.
 */
export function checkWebhookHeaders(headers: WebhookHeaders, nowSeconds: number): WebhookHeadersVerdict {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !ID_SHAPE.test(id)) return { ok: false, reason: "missing_headers" };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "bad_timestamp" };
  if (Math.abs(nowSeconds - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) return { ok: false, reason: "stale_timestamp" };
  if (!signature.split(" ").some(mayMatch)) return { ok: false, reason: "bad_signature" };
  return { ok: true };
}

/**
 * What precedes the body in the signed payload: the method and the target,
 * i.e. the path from `/v1/` on (without the `/functions/v1/api` prefix) and
 * the query string exactly as sent: `GET /v1/releases/<id>/feedback?limit=100\n`.
 * No JSON body starts like this, so a signature over a body alone (what POST
 * /v1/releases also takes) is never one over a request, nor the reverse.
 */
export function requestLine(method: string, target: string): string {
  return `${method} ${target}\n`;
}

/**
 * Checks the three headers against the payloads the request may have been
 * signed over (its requestLine and raw body; for POST /v1/releases also the
 * body alone). The signature header may carry several space-separated
 * `v1,<sig>` (key rotation); one match is enough.
 */
export async function verifyWebhook(
  key: Uint8Array,
  headers: WebhookHeaders,
  payloads: readonly Uint8Array[],
  nowSeconds: number,
): Promise<WebhookVerdict> {
  const refused = checkWebhookHeaders(headers, nowSeconds);
  if (!refused.ok) return refused;
  const id = headers.id!, timestamp = headers.timestamp!, signature = headers.signature!;
  const sent = Number(timestamp);

  const hmacKey = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const expected = await Promise.all(payloads.map(async (payload) => {
    const signed = new Uint8Array(prefix.length + payload.length);
    signed.set(prefix, 0);
    signed.set(payload, prefix.length);
    return new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, signed as BufferSource));
  }));

  let match = false;
  for (const candidate of signature.split(" ")) {
    const [version, value] = candidate.split(",", 2);
    if (version !== "v1" || !value) continue;
    const bytes = base64ToBytes(value);
    // Every candidate is compared (no early exit on a match), in constant time.
    for (const mac of expected) if (bytes && constantTimeEqual(bytes, mac)) match = true;
  }
  return match ? { ok: true, id, timestamp: sent } : { ok: false, reason: "bad_signature" };
}

/** The payload of a request: its requestLine, then the body bytes. */
export function requestPayload(method: string, target: string, body: Uint8Array): Uint8Array {
  const line = new TextEncoder().encode(requestLine(method, target));
  const payload = new Uint8Array(line.length + body.length);
  payload.set(line, 0);
  payload.set(body, line.length);
  return payload;
}
