// vitest globalSetup of the integration project: one stack for all files.
import type { TestProject } from "vitest/node";
import { startTestStack, type StackInfo } from "./test-stack.ts";

declare module "vitest" {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

export default async function setup(project: TestProject) {
  const stack = await startTestStack();
  project.provide("stack", stack.info);
  return async () => {
    await stack.stop();
  };
}
