// The onboarding steps of the app, in order. Declared once for TypeScript;
// the database's copy is app_private.onboarding_steps() (check constraint and
// completion trigger of public.profiles), and tests/integration/auth-session.test.ts
// fails when the two differ.
export const ONBOARDING_STEPS = ["welcome", "profile", "notifications", "first_sync"] as const;

export type OnboardingStep = typeof ONBOARDING_STEPS[number];
