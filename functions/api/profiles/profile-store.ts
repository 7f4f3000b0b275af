// Reads the caller's profile (public.profiles, RLS: own row only) for the
// start-up state of POST /v1/auth/session.
import type { OnboardingStep } from "../../_shared/onboarding-steps.ts";
import type { Onboarding } from "../../_shared/schemas/profile.ts";
import type { Tx } from "../lib/db.ts";

export interface ProfileSummary {
  display_name: string | null;
  onboarding: Onboarding;
}

export async function readProfile(tx: Tx, userId: string): Promise<ProfileSummary> {
  // As JSON: the pool reads no array column as one (db.ts, fetch_types).
  const [row] = await tx<{ display_name: string | null; completed_steps: OnboardingStep[]; completed_at: Date | null }[]>`
    select display_name, to_json(completed_steps) as completed_steps, completed_at from public.profiles where id = ${userId}`;
  // The signup trigger (and the migration's backfill) give every user a
  // profile; a missing row can only mean "nothing done yet".
  return {
    display_name: row?.display_name ?? null,
    onboarding: {
      completed_steps: row?.completed_steps ?? [],
      completed_at: row?.completed_at?.toISOString() ?? null,
    },
  };
}
