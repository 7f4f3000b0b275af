// The onboarding state shown by POST /v1/auth/session, and what the app may
// write to its own row of public.profiles with supabase-js (the database's
// column privileges allow exactly these columns).
import { z } from "zod";
import { ONBOARDING_STEPS } from "../onboarding-steps.ts";
import { storable } from "../storable-text.ts";

export const onboardingStepSchema = z.enum(ONBOARDING_STEPS);

export const onboardingSchema = z.object({
  completed_steps: z.array(onboardingStepSchema).describe("steps done, in the declared order"),
  completed_at: z.string().datetime({ offset: true }).nullable()
    .describe("set by the database when every step is done; null while any is missing"),
});
export type Onboarding = z.infer<typeof onboardingSchema>;

/**
 * `supabase.from("profiles").update(…)`: only these columns are writable.
 * display_name follows the database's rule (profiles_display_name_shape): 1-80
 * characters without surrounding whitespace, whitespace being what
 * String.prototype.trim removes (app_private.trim_display_name, proven equal
 * by tests/integration/display-name-rule.test.ts); the schema trims, so what
 * it returns is what the database stores. A name Postgres cannot store (NUL:
 * refused; an unpaired surrogate: stored as U+FFFD, another name) is
 * refused, invalid_characters.
 */
export const profileUpdateSchema = z.strictObject({
  display_name: storable(z.string().trim().min(1).max(80)).nullable().optional(),
  completed_steps: z.array(onboardingStepSchema).max(ONBOARDING_STEPS.length).optional(),
});
export type ProfileUpdate = z.infer<typeof profileUpdateSchema>;
