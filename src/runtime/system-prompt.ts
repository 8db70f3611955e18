/** A skill as the system prompt sees it, in the configuration's order. */
export interface PromptSkill {
  readonly name: string;
  readonly body: string;
}

/** Bytes the skill block may take; skills that do not fit are dropped whole, in order. */
export const DEFAULT_SKILL_BUDGET_BYTES = 16_384;

export interface ComposedPrompt {
  readonly text: string;
  /** Skills left out for size. They still contribute their allowed tools (access/ decides that). */
  readonly droppedSkills: readonly string[];
}

/**
 * The system prompt: the configuration's own prompt, then each effective skill's body under a
 * heading, while the skill block fits its byte budget. A skill that does not fit is skipped and
 * later, smaller ones may still fit.
 */
export function composeSystemPrompt(base: string, skills: readonly PromptSkill[], budgetBytes = DEFAULT_SKILL_BUDGET_BYTES): ComposedPrompt {
  const sections: string[] = [];
  const dropped: string[] = [];
  let used = 0;
  for (const skill of skills) {
    const section = `## Skill: ${skill.name}\n${skill.body.trim()}`;
    const bytes = Buffer.byteLength(section, 'utf8') + 2;
    if (used + bytes > budgetBytes) {
      dropped.push(skill.name);
      continue;
    }
    used += bytes;
    sections.push(section);
  }
  const text = [base.trim(), ...sections].filter((part) => part !== '').join('\n\n');
  return { text, droppedSkills: dropped };
}
