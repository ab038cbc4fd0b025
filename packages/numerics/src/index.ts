export { philox4x32x10 } from './philox.js';
export { gaussianNoise, MAX_NOISE_LENGTH } from './gaussian-noise.js';
export { linearShiftSigmas, MAX_SCHEDULE_STEPS } from './linear-shift-sigmas.js';
export { flowGrpoStdDev } from './flow-grpo-std-dev.js';
export {
  NOISE_LEVEL_RANGE,
  SDE_MIN_STEP_STD,
  SHIFT_RANGE,
  sdeScheduleIssue,
} from './sde-schedule-bounds.js';
export type { SdeScheduleIssue, SdeScheduleRule } from './sde-schedule-bounds.js';
export { flowMatchStep } from './flow-match-step.js';
export { cfgCombine } from './cfg-combine.js';
export { flowSdeStep } from './flow-sde-step.js';
export type { FlowSdeStepArgs, FlowSdeStepResult } from './flow-sde-step.js';
export type { InvalidArgumentDetails } from './argument-checks.js';
export { float32UlpDistance } from './float32-ulp.js';
export { NUMERICS_TOLERANCES } from './compare.js';
export { VECTOR_GROUPS } from './vector-format.js';
export type {
  CfgCase,
  EulerCase,
  GoldenVectors,
  NormalsCase,
  PhiloxKatCase,
  SdeRecomputeCase,
  SdeSampleCase,
  SigmasCase,
  VectorGroup,
} from './vector-format.js';
export { parseVectors } from './parse-vectors.js';
export type { MalformedVectorsDetails, ParsedVectors } from './parse-vectors.js';
export { verifyVectors } from './verify-vectors.js';
export type { CaseResult, GroupSummary, VerifyReport } from './verify-vectors.js';
export { runVerifyNumerics, VERIFY_NUMERICS_EXIT } from './run-verify-numerics.js';
export type { VerifyNumericsIo } from './run-verify-numerics.js';
