// The four real coding-agent harnesses the harness tests drive, one descriptor each: where
// scripts/harnesses.sh installed it, its offline config, the command for one non-interactive
// session, the skills roots it reads, the tool calls a model makes to load a skill, and parsers of
// what it told the model. Starting and stopping processes is run-harness.ts's job, not this file's.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RecordedRequest, ScriptReply } from './mock-model.mjs';
import { claudeListing, codexListing, execOutput, lastExchange, messageTexts, numberedLinesText, xmlListing } from './listing-parsers.js';

export type HarnessKind = 'claude-code' | 'codex' | 'gemini' | 'opencode';
export const HARNESS_KINDS: readonly HarnessKind[] = ['claude-code', 'codex', 'gemini', 'opencode'];

/** A skill as a harness listed it to the model. */
export interface ListedSkill {
  name: string;
  description: string;
  /** The SKILL.md path the harness gave the model (Claude Code gives none). */
  location?: string;
}

export interface CommandOptions {
  home: string;
  cwd: string;
  mockUrl: string;
  /** Appended to the harness's own arguments. */
  extraArgs?: readonly string[];
}

export interface HarnessCommand {
  argv: string[];
  env: Record<string, string>;
}

export interface Harness {
  kind: HarnessKind;
  npmPackage: string;
  version: string;
  /** The executable, installed by scripts/harnesses.sh under `harnessPrefix()`. */
  bin: string;
  /** Skills roots read at user scope, relative to HOME (verified against the installed package). */
  userRoots: readonly string[];
  /** Skills roots read at project scope, relative to the working directory. */
  projectRoots: readonly string[];
  /** Writes the harness's offline config under `home`: model at `mockUrl`, telemetry, updates, plugin sync off. */
  prepare(home: string, mockUrl: string): Promise<void>;
  /** argv and the complete environment (nothing inherited) of one non-interactive session. */
  command(prompt: string, options: CommandOptions): HarnessCommand;
  /** The tool call a model makes to load the listed skill `name`, given the request that lists it. */
  loadSkill(name: string, request: RecordedRequest): ScriptReply;
  /** The tool call a model makes to read `file` (absolute). */
  readFile(file: string): ScriptReply;
  /** The folder of skill `name`, as the harness told the model (listing or loaded skill). */
  skillDir(name: string, request: RecordedRequest): string | undefined;
  /** The skills the harness listed to the model, from the last request that carries a listing. */
  listedSkills(requests: readonly RecordedRequest[]): ListedSkill[];
  /** The SKILL.md text (body; Codex: the whole file) the harness sent back when the model loaded a skill. */
  loadedSkillText(requests: readonly RecordedRequest[], name?: string): string | undefined;
  /** The text of a file the model read through the harness (`file` narrows to that path). */
  readFileText(requests: readonly RecordedRequest[], file?: string): string | undefined;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Where scripts/harnesses.sh installs (SKILLS_MOUNT_HARNESSES overrides, as the script's PREFIX argument). */
export function harnessPrefix(): string {
  return process.env['SKILLS_MOUNT_HARNESSES'] ?? path.join(repoRoot, '.cache/harnesses');
}

function binOf(kind: HarnessKind, name: string): string {
  return path.join(harnessPrefix(), kind, 'node_modules/.bin', name);
}

/** Whether the harness's executable is installed. */
export function isInstalled(kind: HarnessKind): boolean {
  return existsSync(harnesses[kind].bin);
}

/**
 * The environment every harness runs with, nothing inherited: HOME and the XDG folders in the test's
 * HOME; the mock as HTTP(S) proxy for everything but 127.0.0.1, so any other host a harness tries to
 * reach is recorded and refused, never contacted.
 */
function baseEnv(home: string, mockUrl: string): Record<string, string> {
  const noProxy = '127.0.0.1,localhost,::1';
  return {
    PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: home,
    USER: 'harness',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    TMPDIR: path.join(home, 'tmp'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    HTTP_PROXY: mockUrl,
    HTTPS_PROXY: mockUrl,
    http_proxy: mockUrl,
    https_proxy: mockUrl,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

async function writeText(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

async function makeHome(home: string): Promise<void> {
  await mkdir(path.join(home, 'tmp'), { recursive: true });
}

const claudeCode: Harness = {
  kind: 'claude-code',
  npmPackage: '@anthropic-ai/claude-code',
  version: '2.1.197',
  get bin() {
    return binOf('claude-code', 'claude');
  },
  userRoots: ['.claude/skills'],
  projectRoots: ['.claude/skills'],
  async prepare(home) {
    // Claude Code takes its offline settings from the environment (command()); nothing to write.
    await makeHome(home);
  },
  command(prompt, { home, mockUrl, extraArgs = [] }) {
    // Read must be allowed for a skill's other files: -p mode denies it otherwise.
    return { argv: [binOf('claude-code', 'claude'), '-p', prompt, '--output-format', 'json', '--allowedTools', 'Read', ...extraArgs], env: claudeEnv(home, mockUrl) };
  },
  loadSkill: (name) => ({ tool: 'Skill', input: { skill: name } }),
  readFile: (file) => ({ tool: 'Read', input: { file_path: file } }),
  skillDir(name, request) {
    // Claude Code's listing has no paths; the loaded skill says where it lives.
    for (const { text } of messageTexts(request)) {
      const match = /^Base directory for this skill: (.+)$/m.exec(text);
      if (match && path.basename(match[1]!) === name) return match[1];
    }
    return undefined;
  },
  listedSkills: (requests) => lastListing(requests, claudeListing),
  loadedSkillText(requests, name) {
    for (const request of [...requests].reverse()) {
      for (const { text } of messageTexts(request)) {
        const match = /^Base directory for this skill: (.+)\n\n([\s\S]*)$/.exec(text);
        if (match && (name === undefined || path.basename(match[1]!) === name)) return match[2];
      }
    }
    return undefined;
  },
  readFileText(requests, file) {
    const result = lastExchange(requests, (call) => call.name === 'Read' && (file === undefined || call.input['file_path'] === file));
    return result === undefined ? undefined : numberedLinesText(result, /^ *\d+\t/);
  },
};

function claudeEnv(home: string, mockUrl: string): Record<string, string> {
  return {
    ...baseEnv(home, mockUrl),
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
}

/** A long-lived Claude Code session: user messages as stream-json lines on stdin, events on stdout. */
export function claudeSessionCommand({ home, mockUrl, extraArgs = [] }: CommandOptions): HarnessCommand {
  const argv = [binOf('claude-code', 'claude'), '-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Read', ...extraArgs];
  return { argv, env: claudeEnv(home, mockUrl) };
}

const codex: Harness = {
  kind: 'codex',
  npmPackage: '@openai/codex',
  version: '0.171.0',
  get bin() {
    return binOf('codex', 'codex');
  },
  userRoots: ['.codex/skills', '.agents/skills'],
  // .agents/skills is the documented one; 0.171 still reads a project's .codex/skills too.
  projectRoots: ['.agents/skills', '.codex/skills'],
  async prepare(home, mockUrl) {
    await makeHome(home);
    await writeText(
      path.join(home, '.codex/config.toml'),
      [
        // A model Codex has no metadata for gets the classic function tools (exec_command); its
        // default model (gpt-6.2-sol in 0.171) gets namespaced "additional_tools" and a JavaScript exec tool.
        'model = "mock-model"',
        'model_provider = "mock"',
        'check_for_update_on_startup = false',
        '',
        '[model_providers.mock]',
        'name = "mock"',
        `base_url = "${mockUrl}/v1"`,
        'wire_api = "responses"',
        'env_key = "MOCK_API_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n'),
    );
  },
  command(prompt, { home, mockUrl, extraArgs = [] }) {
    // Without the --disable flags Codex tries to sync plugins and apps from the internet.
    const disabled = ['plugins', 'remote_plugin', 'apps', 'in_app_updates'].flatMap((feature) => ['--disable', feature]);
    return {
      argv: [binOf('codex', 'codex'), 'exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...disabled, ...extraArgs, prompt],
      env: { ...baseEnv(home, mockUrl), MOCK_API_KEY: 'test' },
    };
  },
  loadSkill(name, request) {
    const location = codexListing(request).find((skill) => skill.name === name)?.location;
    return location === undefined ? `skill ${name} is not listed` : { tool: 'exec_command', input: { cmd: `cat '${location}'` } };
  },
  readFile: (file) => ({ tool: 'exec_command', input: { cmd: `cat '${file}'` } }),
  skillDir(name, request) {
    const location = codexListing(request).find((skill) => skill.name === name)?.location;
    return location === undefined ? undefined : path.dirname(location);
  },
  listedSkills: (requests) => lastListing(requests, codexListing),
  loadedSkillText(requests, name) {
    // Codex names a skill by its frontmatter, wherever its folder is: find the file it listed.
    const location = name === undefined ? undefined : lastListing(requests, codexListing).find((skill) => skill.name === name)?.location;
    if (name !== undefined && location === undefined) return undefined;
    const result = lastExchange(requests, (call) => call.name === 'exec_command' && isCatOf(call.input['cmd'], (file) => (location === undefined ? path.basename(file) === 'SKILL.md' : file === location)));
    return result === undefined ? undefined : execOutput(result);
  },
  readFileText(requests, file) {
    const result = lastExchange(requests, (call) => call.name === 'exec_command' && isCatOf(call.input['cmd'], (read) => (file === undefined ? path.basename(read) !== 'SKILL.md' : read === file)));
    return result === undefined ? undefined : execOutput(result);
  },
};

/** Whether `cmd` is `cat 'FILE'` for a FILE that `accept`s. */
function isCatOf(cmd: unknown, accept: (file: string) => boolean): boolean {
  const match = typeof cmd === 'string' ? /^cat '([^']+)'$/.exec(cmd) : null;
  return match !== null && accept(match[1]!);
}

const gemini: Harness = {
  kind: 'gemini',
  npmPackage: '@google/gemini-cli',
  version: '0.61.0',
  get bin() {
    return binOf('gemini', 'gemini');
  },
  userRoots: ['.gemini/skills', '.agents/skills'],
  projectRoots: ['.gemini/skills', '.agents/skills'],
  async prepare(home) {
    await makeHome(home);
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      // A fixed model: "auto" first asks a classifier model (a JSON answer) which model to route to.
      model: { name: 'gemini-2.5-flash' },
    };
    await writeText(path.join(home, '.gemini/settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  },
  command(prompt, { home, mockUrl, extraArgs = [] }) {
    return {
      argv: [binOf('gemini', 'gemini'), '-p', prompt, '--output-format', 'json', '--yolo', ...extraArgs],
      env: { ...baseEnv(home, mockUrl), GEMINI_API_KEY: 'test', GOOGLE_GEMINI_BASE_URL: mockUrl, GEMINI_CLI_NO_RELAUNCH: 'true' },
    };
  },
  loadSkill: (name) => ({ tool: 'activate_skill', input: { name } }),
  readFile: (file) => ({ tool: 'read_file', input: { file_path: file } }),
  skillDir: (name, request) => dirOfListed(xmlListing(request), name),
  listedSkills: (requests) => lastListing(requests, xmlListing),
  loadedSkillText(requests, name) {
    const result = lastExchange(requests, (call) => call.name === 'activate_skill' && (name === undefined || call.input['name'] === name));
    const match = result === undefined ? null : /<instructions>\n([\s\S]*?)\n\s*<\/instructions>/.exec(result);
    // Gemini indents the body by four spaces inside <instructions>.
    return match ? match[1]!.replace(/^ {4}/gm, '') : undefined;
  },
  readFileText(requests, file) {
    return lastExchange(requests, (call) => call.name === 'read_file' && (file === undefined || call.input['file_path'] === file));
  },
};

const opencode: Harness = {
  kind: 'opencode',
  npmPackage: 'opencode-ai',
  version: '1.18.33',
  get bin() {
    return binOf('opencode', 'opencode');
  },
  // Its config folders (~/.config/opencode, ~/.opencode) take skill/ and skills/; ~/.claude and ~/.agents take skills/.
  userRoots: ['.config/opencode/skills', '.config/opencode/skill', '.opencode/skills', '.opencode/skill', '.claude/skills', '.agents/skills'],
  projectRoots: ['.opencode/skills', '.opencode/skill', '.claude/skills', '.agents/skills'],
  async prepare(home, mockUrl) {
    await makeHome(home);
    const dir = path.join(home, '.config/opencode');
    const config = {
      $schema: 'https://opencode.ai/config.json',
      provider: { mock: { npm: '@ai-sdk/anthropic', name: 'Mock', options: { baseURL: `${mockUrl}/v1`, apiKey: 'test' }, models: { 'mock-model': { name: 'Mock model' } } } },
      model: 'mock/mock-model',
      small_model: 'mock/mock-model',
      autoupdate: false,
      share: 'disabled',
      permission: { '*': 'allow' },
    };
    await writeText(path.join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
    // OpenCode installs @opencode-ai/plugin from npm into each config folder at startup unless the
    // folder's package.json and package-lock.json already list it and node_modules exists.
    const dependencies = { '@opencode-ai/plugin': '1.18.33' };
    await writeText(path.join(dir, 'package.json'), `${JSON.stringify({ dependencies })}\n`);
    await writeText(path.join(dir, 'package-lock.json'), `${JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies } } })}\n`);
    await mkdir(path.join(dir, 'node_modules'), { recursive: true });
  },
  command(prompt, { home, mockUrl, extraArgs = [] }) {
    return {
      argv: [binOf('opencode', 'opencode'), 'run', ...extraArgs, prompt],
      env: {
        ...baseEnv(home, mockUrl),
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        // A project's .opencode folder gets the same npm install: it reaches the mock and fails fast.
        npm_config_registry: `${mockUrl}/npm-registry/`,
      },
    };
  },
  loadSkill: (name) => ({ tool: 'skill', input: { name } }),
  readFile: (file) => ({ tool: 'read', input: { filePath: file } }),
  skillDir: (name, request) => dirOfListed(xmlListing(request), name),
  listedSkills: (requests) => lastListing(requests, xmlListing),
  loadedSkillText(requests, name) {
    const result = lastExchange(requests, (call) => call.name === 'skill' && (name === undefined || call.input['name'] === name));
    const match = result === undefined ? null : /^# Skill: .*\n\n([\s\S]*?)\n\nBase directory for this skill: /m.exec(result);
    return match ? match[1] : undefined;
  },
  readFileText(requests, file) {
    const result = lastExchange(requests, (call) => call.name === 'read' && (file === undefined || call.input['filePath'] === file));
    const match = result === undefined ? null : /<content>\n([\s\S]*?)\n\n?\(End of file[^\n]*\)\n<\/content>/.exec(result);
    return match ? numberedLinesText(match[1]!, /^\d+: /) : undefined;
  },
};

function lastListing(requests: readonly RecordedRequest[], parse: (request: RecordedRequest) => ListedSkill[]): ListedSkill[] {
  for (const request of [...requests].reverse()) {
    if (request.api === undefined) continue;
    const listed = parse(request);
    if (listed.length > 0) return listed;
  }
  return [];
}

function dirOfListed(listed: ListedSkill[], name: string): string | undefined {
  const location = listed.find((skill) => skill.name === name)?.location;
  return location === undefined ? undefined : path.dirname(location);
}

/** The descriptors, by kind. */
export const harnesses: Readonly<Record<HarnessKind, Harness>> = { 'claude-code': claudeCode, codex, gemini, opencode };
