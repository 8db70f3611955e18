import './timeline.css';
import type { StepData } from './step.tsx';

/** The two kinds of time a run spends: waiting for its model, and running its tools. */
type Part = 'model' | 'tool';

interface Timed {
  readonly sequence: number;
  readonly round: number;
  readonly part: Part;
  /** What ran: "model", or the tool's name. */
  readonly what: string;
  readonly durationMs: number;
}

/**
 * The steps that took time: LLM steps (the provider call) and TOOL steps (the tool call). REQUEST
 * and APPROVAL steps carry no duration; a step whose duration the API left out is not drawn.
 */
export function timedSteps(steps: readonly StepData[]): Timed[] {
  return steps.flatMap((step): Timed[] => {
    if (typeof step.durationMs !== 'number' || (step.kind !== 'LLM' && step.kind !== 'TOOL')) return [];
    const part: Part = step.kind === 'LLM' ? 'model' : 'tool';
    return [{ sequence: step.sequence, round: step.round, part, what: part === 'model' ? 'model' : (step.toolName ?? 'tool'), durationMs: step.durationMs }];
  });
}

/** A duration as people read it: milliseconds under a tenth of a second, else seconds to one decimal. */
export function formatDuration(ms: number): string {
  return ms < 100 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const total = (timed: readonly Timed[], part: Part) => timed.filter((item) => item.part === part).reduce((sum, item) => sum + item.durationMs, 0);

/**
 * Where a run's time went, step by step: one horizontal bar per timed step, its length relative
 * to the longest, model time and tool time in two colours, and the totals as text. The bars are
 * decoration (hidden from assistive technology); the table beside them, visually hidden, holds the
 * same figures for a screen reader.
 */
export function Timeline({ steps }: { steps: readonly StepData[] }) {
  const timed = timedSteps(steps);
  if (timed.length === 0) return null;
  const longest = Math.max(...timed.map((item) => item.durationMs), 1);
  const model = total(timed, 'model');
  const tools = total(timed, 'tool');
  return (
    <section class="timeline" aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline</h2>
      <p id="timeline-totals" data-model-ms={Math.round(model)} data-tool-ms={Math.round(tools)}>
        model {formatDuration(model)} · tools {formatDuration(tools)}
      </p>
      <ul class="timeline-legend" aria-hidden="true">
        <li>
          <span class="swatch model" /> model
        </li>
        <li>
          <span class="swatch tool" /> tools
        </li>
      </ul>
      <ol class="timeline-bars" aria-hidden="true">
        {timed.map((item) => (
          <li key={item.sequence} data-sequence={item.sequence} data-part={item.part}>
            <span class="timeline-label">
              {item.sequence} · {item.what}
            </span>
            <span class="timeline-track">
              {/* Sized through the CSSOM (Preact's style prop): the CSP allows no inline style attribute. */}
              <span class={`timeline-bar ${item.part}`} style={{ width: `${(100 * item.durationMs) / longest}%` }} />
            </span>
            <span class="timeline-figure">{formatDuration(item.durationMs)}</span>
          </li>
        ))}
      </ol>
      <table class="visually-hidden" id="timeline-table">
        <caption>Step durations (model {formatDuration(model)}, tools {formatDuration(tools)})</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Round</th>
            <th scope="col">Time of</th>
            <th scope="col">Duration (ms)</th>
          </tr>
        </thead>
        <tbody>
          {timed.map((item) => (
            <tr key={item.sequence} data-sequence={item.sequence} data-part={item.part}>
              <td>{item.sequence}</td>
              <td>{item.round}</td>
              <td>{item.what}</td>
              <td>{Math.round(item.durationMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
