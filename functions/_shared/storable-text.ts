// Postgres text and jsonb refuse \u0000 and unpaired UTF-16 surrogates.
// Refusing them at validation turns what would be a database error (a 500)
// into a field detail the client can act on.
import { z } from "zod";

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What a field detail says of a string (or a JSON object key) holding such a character. */
export const UNSTORABLE_MESSAGE = "contains a character that cannot be stored (NUL or an unpaired surrogate)";

/**
 * What a field detail says of an object with such a key. It points at the object: a pointer
 * naming the key would not survive the ledger (or any answer through boundedDetails) as itself.
 */
export const UNSTORABLE_KEY_MESSAGE = `has a key that ${UNSTORABLE_MESSAGE}`;

/** Whether Postgres can store `text` (as text, or as a string or key in json/jsonb). */
export function isStorable(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** `text` with every character Postgres cannot store replaced by U+FFFD (for text we echo, e.g. a client's key name). */
export function toStorable(text: string): string {
  return text.replace(new RegExp(UNSTORABLE.source, "g"), "\uFFFD");
}

/** `schema`, refusing a string Postgres cannot store (`invalid_characters`) rather than letting the write fail or change it. */
export function storable<T extends z.ZodString>(schema: T): T {
  return schema.refine(isStorable, {
    message: UNSTORABLE_MESSAGE,
    params: { code: "invalid_characters" },
  });
}

/** A string Postgres can store, `min`..`max` characters. */
export function storableText(max: number, min = 0) {
  return storable(z.string().min(min).max(max));
}

/** `schema`, refusing a string over `maxBytes` in UTF-8 (`too_long`): for what Postgres bounds in bytes (a name, an index entry). */
export function bytesAtMost<T extends z.ZodType<string>>(schema: T, maxBytes: number, message: string) {
  return schema.refine((value) => new TextEncoder().encode(value).length <= maxBytes, { message, params: { code: "too_long" } });
}
