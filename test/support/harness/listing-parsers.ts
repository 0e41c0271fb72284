// Parsers for what the harnesses put into model requests: their skill listings (three formats) and
// the text of tool results (line-numbered file reads, Codex's exec output). Text in, values out:
// no harness configuration, no processes.
import { instructionText, toolExchanges, type RecordedRequest, type ToolCall } from './mock-model.mjs';

export { messageTexts } from './mock-model.mjs';

export interface ParsedSkill {
  name: string;
  description: string;
  location?: string;
}

/**
 * Claude Code: "The following skills are available for use with the Skill tool:" then lines
 * "- NAME: DESCRIPTION" (in a system-role message). Every such block in the request counts, since a
 * running session announces skills added later in blocks of their own.
 */
export function claudeListing(request: RecordedRequest): ParsedSkill[] {
  const marker = 'The following skills are available for use with the Skill tool:';
  const skills: ParsedSkill[] = [];
  for (const block of instructionText(request).split(marker).slice(1)) {
    const lines = block.replace(/^\n+/, '').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const entry = /^- (.+?): (.*)$/.exec(line) ?? /^- ([^\s:]+):?$/.exec(line);
      if (entry) {
        skills.push({ name: entry[1]!, description: entry[2] ?? '' });
      } else if (line === '' || skills.length === 0) {
        if (!(lines[i + 1] ?? '').startsWith('- ')) break;
      } else {
        skills[skills.length - 1]!.description += `\n${line}`;
      }
    }
  }
  return dedupe(skills);
}

/**
 * Codex: a developer message `<skills_instructions>` with a roots table ("- `r0` = `/path`") and
 * entries "- NAME: DESCRIPTION (file: r0/NAME/SKILL.md)"; locations are expanded with the table.
 */
export function codexListing(request: RecordedRequest): ParsedSkill[] {
  const block = /<skills_instructions>([\s\S]*?)<\/skills_instructions>/.exec(instructionText(request))?.[1];
  if (block === undefined) return [];
  const roots = new Map<string, string>();
  for (const match of block.matchAll(/^- `(r\d+)` = `(.*)`$/gm)) roots.set(match[1]!, match[2]!);
  const skills: ParsedSkill[] = [];
  for (const match of block.matchAll(/^- (.+?): ([\s\S]*?) \(file: (.+?)\)$/gm)) {
    const file = match[3]!;
    const slash = file.indexOf('/');
    const root = slash > 0 ? roots.get(file.slice(0, slash)) : undefined;
    skills.push({ name: match[1]!, description: match[2]!, location: root === undefined ? file : `${root}${file.slice(slash)}` });
  }
  return skills;
}

/** Gemini CLI and OpenCode: `<available_skills><skill><name>…<description>…<location>…` (XML-escaped). */
export function xmlListing(request: RecordedRequest): ParsedSkill[] {
  const block = /<available_skills>([\s\S]*?)<\/available_skills>/.exec(instructionText(request))?.[1];
  if (block === undefined) return [];
  const skills: ParsedSkill[] = [];
  for (const match of block.matchAll(/<skill>\s*<name>([\s\S]*?)<\/name>\s*<description>([\s\S]*?)<\/description>\s*<location>([\s\S]*?)<\/location>\s*<\/skill>/g)) {
    skills.push({ name: unescapeXml(match[1]!.trim()), description: unescapeXml(match[2]!.trim()), location: unescapeXml(match[3]!.trim()) });
  }
  return skills;
}

function unescapeXml(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

function dedupe(skills: ParsedSkill[]): ParsedSkill[] {
  const byName = new Map<string, ParsedSkill>();
  for (const skill of skills) byName.set(skill.name, skill);
  return [...byName.values()];
}

/** The result text of the last tool call (in any of `requests`) that `accept`s, newest request first. */
export function lastExchange(requests: readonly RecordedRequest[], accept: (call: ToolCall) => boolean): string | undefined {
  for (const request of [...requests].reverse()) {
    if (request.api === undefined) continue;
    const exchange = toolExchanges(request).filter((e) => e.result !== undefined && accept(e)).at(-1);
    if (exchange) return exchange.result;
  }
  return undefined;
}

/** A file's text from a line-numbered rendering (each line prefixed per `prefix`, e.g. "   1\t"). */
export function numberedLinesText(numbered: string, prefix: RegExp): string {
  return numbered
    .split('\n')
    .map((line) => line.replace(prefix, ''))
    .join('\n');
}

/** Codex's exec_command result: the command's output after its "Output:" header. */
export function execOutput(result: string): string {
  const at = result.indexOf('Output:\n');
  return at < 0 ? result : result.slice(at + 'Output:\n'.length);
}
