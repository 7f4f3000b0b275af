// The one shape check for ids, wherever the API takes or answers one (paths,
// tokens, bodies, answers): a hyphenated UUID, any case, any version and
// variant digits: what Postgres's uuid type stores, whoever wrote the row.
import { z } from "zod";

// A-F spelled out rather than an `i` flag: the pattern is published in the OpenAPI document, which has no flags.
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * A uuid in a request or an answer, lower-cased: ids are normalised once, here
 * at the edge, and answers carry Postgres's lower case already. Not zod's
 * z.uuid(), which takes only RFC 9562 version and variant digits: a task an
 * editor inserted through the Data API as 11111111-1111-1111-1111-111111111111,
 * or a user id a project chose, made answers the client refused. Lower-cased
 * by a check, not a transform: no pipe and no second parse per id (a 500-op
 * push validates 1,000 of them).
 */
export const uuidSchema = z.string().regex(UUID_PATTERN, { message: "must be a uuid" }).toLowerCase().meta({ format: "uuid" });
