// Scripts for the mock model: what a model answers, turn by turn, to make a harness do something.
// Side requests that offer no tools (OpenCode's title, Gemini's checks) get plain text.
import path from 'node:path';
import { harnesses, type HarnessKind } from './harnesses.js';
import { toolNames, type ModelScript, type ScriptReply } from './mock-model.mjs';

/** The text a scripted model ends with. */
export const DONE_TEXT = 'done';

/** Answers turn i of a tool-offering request with `steps[i]`, and everything else with DONE_TEXT. */
export function stepsScript(steps: readonly ScriptReply[]): ModelScript {
  return (_kind, request, turn) => (toolNames(request).length > 0 ? (steps[turn] ?? DONE_TEXT) : DONE_TEXT);
}

/**
 * Loads the listed skill `name` the way a model would with this harness, then (when `file` is given)
 * reads `file`, relative to the skill's folder as the harness reported it to the model.
 */
export function loadSkillScript(kind: HarnessKind, name: string, file?: string): ModelScript {
  const harness = harnesses[kind];
  return (_kind, request, turn) => {
    if (toolNames(request).length === 0) return DONE_TEXT;
    if (turn === 0) return harness.loadSkill(name, request);
    if (turn === 1 && file !== undefined) {
      const dir = harness.skillDir(name, request);
      return dir === undefined ? `no folder reported for ${name}` : harness.readFile(path.join(dir, file));
    }
    return DONE_TEXT;
  };
}
