import { z } from "zod";

/**
 * A query-string whole number written in at most `digits` digits (so no sign, point or exponent,
 * and no number past what the caller bounds it to next): its refusal says both.
 */
export const digitsParam = (digits: number) =>
  z.string().regex(new RegExp(`^[0-9]{1,${digits}}$`), `must be a whole number of at most ${digits} digits`);
