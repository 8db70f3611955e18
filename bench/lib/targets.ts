/** One row of a workload's target report: the target, the measured figure, and whether it was met (null: not judged). */
export interface TargetCheck {
  readonly target: string;
  readonly figure: string;
  readonly met: boolean | null;
}
