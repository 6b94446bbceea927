/**
 * How big an acceptance loop runs. CI runs each loop at a size that proves the rule on every
 * push and fits the suite's time budget; `ASG_TEST_SIZE=full` runs the size a release is checked
 * at (`npm run test:full`). A test picks both sizes, never a wall-clock bound.
 */
export function sized(ci: number, full: number): number {
  return process.env.ASG_TEST_SIZE === 'full' ? full : ci;
}
