/**
 * What a tool hands back to the loop. `content` is the ONLY path to the model; artifacts go to
 * humans (the UI and the run record) and never reach a prompt.
 */

export interface TableArtifact {
  type: 'table';
  label: string;
  data: { columns: string[]; rows: string[][] };
}

export interface TextArtifact {
  type: 'text';
  label: string;
  data: { text: string };
}

/** A new artifact type is one more union member here plus one renderer branch. */
export type Artifact = TableArtifact | TextArtifact;

export function tableArtifact(label: string, columns: string[], rows: string[][]): TableArtifact {
  return { type: 'table', label, data: { columns, rows } };
}

export function textArtifact(label: string, text: string): TextArtifact {
  return { type: 'text', label, data: { text } };
}

const NO_ARTIFACTS: readonly Artifact[] = Object.freeze([]);

/**
 * An immutable tool outcome. Build one with `ToolResult.text` or `ToolResult.error`; an error never
 * carries artifacts. Nothing on this class folds artifacts into text: `String(result)` and
 * `JSON.stringify(result)` expose only the content, so an accidental interpolation or serialisation
 * cannot smuggle artifact data to the model.
 *
 * Contents and artifacts are stored as given; the loop's one bounding seam (`boundToolResult`) is
 * what makes them safe and small.
 */
export class ToolResult {
  readonly content: string;
  readonly isError: boolean;
  /** Frozen. Always empty when `isError`. */
  readonly artifacts: readonly Artifact[];

  private constructor(content: string, isError: boolean, artifacts: readonly Artifact[]) {
    this.content = content;
    this.isError = isError;
    this.artifacts = isError || artifacts.length === 0 ? NO_ARTIFACTS : Object.freeze([...artifacts]);
    Object.freeze(this);
  }

  static text(content: string, ...artifacts: Artifact[]): ToolResult {
    return new ToolResult(content, false, artifacts);
  }

  static error(content: string): ToolResult {
    return new ToolResult(content, true, NO_ARTIFACTS);
  }

  /** Same kind (error or not) and artifacts, new content. */
  withContent(content: string): ToolResult {
    return new ToolResult(content, this.isError, this.artifacts);
  }

  /** New artifacts; an error result stays artifact-free and is returned as is. */
  withArtifacts(artifacts: readonly Artifact[]): ToolResult {
    if (this.isError) return this;
    return new ToolResult(this.content, false, artifacts);
  }

  /** The content only — never the artifacts. */
  toString(): string {
    return this.content;
  }

  /** The content and the error flag only — never the artifacts. */
  toJSON(): { content: string; isError: boolean } {
    return { content: this.content, isError: this.isError };
  }
}
