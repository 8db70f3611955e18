import type { StoredStep } from '../../runtime/stored-step.ts';
import { STEP_KINDS } from '../../runtime/run.ts';
import { builder } from '../builder.ts';
import { ArtifactUnion, classifyArtifact } from './artifacts.ts';

/** One stored (or live) step of a run, as the schema serves it. */
export interface StepView {
  readonly runId: string;
  readonly sequence: number;
  readonly step: StoredStep;
}

const RunStepKindEnum = builder.enumType('RunStepKind', { values: STEP_KINDS });

const StepUsageRef = builder.simpleObject('StepUsage', {
  // Float: token counts are safe integers that may pass 2^31 (GraphQL's Int is 32-bit).
  fields: (t) => ({ promptTokens: t.float(), completionTokens: t.float(), cost: t.float() }),
});

const ApprovalDecisionRef = builder.simpleObject('ApprovalDecision', {
  description: 'A human decision on a turn that called a write tool, stored before any write ran.',
  fields: (t) => ({
    approverName: t.string(),
    approved: t.boolean(),
    turnDigest: t.string(),
    decidedAt: t.string(),
  }),
});

export const RunStepRef = builder.objectRef<StepView>('RunStep').implement({
  description: 'One step of a run. Content fields are null when the privacy level dropped them (contentRedacted).',
  fields: (t) => ({
    sequence: t.int({ resolve: (view) => view.sequence }),
    kind: t.field({ type: RunStepKindEnum, resolve: (view) => view.step.kind }),
    round: t.int({ resolve: (view) => view.step.round }),
    durationMs: t.float({ nullable: true, resolve: (view) => view.step.durationMs ?? null }),
    content: t.string({ nullable: true, resolve: (view) => view.step.content ?? null }),
    thinking: t.string({ nullable: true, resolve: (view) => view.step.thinking ?? null }),
    messagesSent: t.field({ type: 'JSON', nullable: true, resolve: (view) => view.step.messagesSent ?? null }),
    offeredTools: t.stringList({ nullable: true, resolve: (view) => view.step.offeredTools ?? null }),
    requestedToolCalls: t.field({ type: 'JSON', nullable: true, resolve: (view) => view.step.requestedToolCalls ?? null }),
    finishReason: t.string({ nullable: true, resolve: (view) => view.step.finishReason ?? null }),
    toolCallId: t.string({ nullable: true, resolve: (view) => view.step.toolCallId ?? null }),
    toolName: t.string({ nullable: true, resolve: (view) => view.step.toolName ?? null }),
    toolArguments: t.field({ type: 'JSON', nullable: true, resolve: (view) => view.step.toolArguments ?? null }),
    toolResult: t.string({ nullable: true, resolve: (view) => view.step.toolResult ?? null }),
    toolIsError: t.boolean({ nullable: true, resolve: (view) => view.step.toolIsError ?? null }),
    outcomeUnknown: t.boolean({
      nullable: true,
      description:
        'TOOL steps: true when a tool that needed approval was running when its process died. It was not called again; the model was told its outcome is unknown.',
      resolve: (view) => (view.step.kind === 'TOOL' ? view.step.outcomeUnknown === true : null),
    }),
    artifacts: t.field({
      type: [ArtifactUnion],
      nullable: true,
      description: 'Run-only output of a TOOL step; never sent to the model.',
      resolve: (view) => (Array.isArray(view.step.toolArtifacts) ? view.step.toolArtifacts.map(classifyArtifact) : null),
    }),
    contentRedacted: t.boolean({ resolve: (view) => view.step.contentRedacted }),
    contentLength: t.int({ nullable: true, resolve: (view) => view.step.contentLength ?? null }),
    toolResultLength: t.int({ nullable: true, resolve: (view) => view.step.toolResultLength ?? null }),
    toolArtifactsCount: t.int({ nullable: true, resolve: (view) => view.step.toolArtifactsCount ?? null }),
    toolArtifactTypes: t.stringList({ nullable: true, resolve: (view) => view.step.toolArtifactTypes ?? null }),
    requestedToolNames: t.stringList({ nullable: true, resolve: (view) => view.step.requestedToolNames ?? null }),
    messagesSentCount: t.int({ nullable: true, resolve: (view) => view.step.messagesSentCount ?? null }),
    usage: t.field({ type: StepUsageRef, nullable: true, resolve: (view) => view.step.usage ?? null }),
    approval: t.field({
      type: ApprovalDecisionRef,
      nullable: true,
      resolve: (view) =>
        view.step.approval
          ? {
              approverName: view.step.approval.approverName,
              approved: view.step.approval.approved,
              turnDigest: view.step.approval.digest,
              decidedAt: view.step.approval.decidedAt,
            }
          : null,
    }),
  }),
});
