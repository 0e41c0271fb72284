// Config parsing for every supported format (real-world shaped samples under
// test/fixtures/configs), variable expansion, label normalization, --server and --only.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfigPath, loadMountConfig, parseConfigText, workspaceFolderFor } from '../../src/config/config.js';
import { expandVariables, inputVariableName, type ExpansionContext } from '../../src/config/env-expansion.js';
import { parseJsonc } from '../../src/config/jsonc.js';
import { normalizeLabel } from '../../src/config/labels.js';
import { parseServerFlag, splitWords } from '../../src/config/server-flags.js';
import { ConfigError } from '../../src/errors.js';
import { makeTempDir, removeDir, withTempDir } from '../support/temp-dir.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/configs');
const fixture = (name: string) => path.join(FIXTURES, name);

const ENV = {
  HOME: '/home/alex',
  PATH: '/usr/bin',
  GITHUB_TOKEN: 'ghp_test',
  BRAVE_API_KEY: 'brave-key',
  DOCS_TOKEN: 'docs-secret',
  API_KEY: 'api-secret',
  EVENTS_KEY: 'events-key',
  SKILLS_MOUNT_INPUT_GITHUB_TOKEN: 'ghp_from_env',
  DEBUG_PW: '1',
};

describe('config formats, detected from content', () => {
  it('Claude Desktop: mcpServers with command/args/env; a key that is not a label is normalized and said so', async () => {
    const config = await loadMountConfig({ configPath: fixture('claude-desktop.json'), env: ENV });
    expect(config.origin).toBe(`${fixture('claude-desktop.json')} (mcpServers (Claude Desktop / Cursor))`);
    expect(config.servers.map((server) => server.label)).toEqual(['filesystem', 'github', 'brave-search']);
    expect(config.servers[1]!.config).toEqual({
      kind: 'stdio',
      command: 'docker',
      args: ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_test' },
      cwd: undefined,
    });
    expect(config.notes).toContain('server "Brave Search" is mounted as "brave-search" (labels are lowercase directory names)');
  });

  it('Cursor: url + headers is Streamable HTTP with ${env:VAR} expanded; "disabled": true is skipped', async () => {
    const config = await loadMountConfig({ configPath: fixture('cursor-mcp.json'), env: ENV });
    expect(config.servers.map((server) => server.label)).toEqual(['docs', 'linear']);
    expect(config.servers[0]!.config).toEqual({
      kind: 'http',
      url: 'https://docs.example.com/mcp',
      headers: { Authorization: 'Bearer docs-secret' },
    });
    expect(config.notes.join('\n')).toMatch(/"postgres" is disabled/);
  });

  it('Claude Code .mcp.json: type stdio/http/sse, ${VAR} and ${VAR:-default}', async () => {
    const config = await loadMountConfig({ configPath: fixture('claude-code.mcp.json'), env: ENV });
    expect(config.origin).toMatch(/Claude Code \.mcp\.json/);
    const [skills, api, legacy] = config.servers.map((server) => server.config);
    expect(skills).toMatchObject({ kind: 'stdio', command: 'node', args: ['/home/alex/src/skills-server/dist/index.js', '--root', '/srv/skills'] });
    expect(api).toEqual({ kind: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer api-secret' } });
    expect(legacy).toEqual({ kind: 'sse', url: 'https://events.example.com/sse', headers: { 'X-API-Key': 'events-key' } });
    const overridden = await loadMountConfig({
      configPath: fixture('claude-code.mcp.json'),
      env: { ...ENV, SKILLS_ROOT: '/data/skills', API_BASE_URL: 'http://127.0.0.1:9000' },
    });
    expect(overridden.servers[0]!.config).toMatchObject({ args: [expect.any(String), '--root', '/data/skills'] });
    expect(overridden.servers[1]!.config).toMatchObject({ url: 'http://127.0.0.1:9000/mcp' });
  });

  it('VS Code mcp.json: JSONC, servers, ${input:ID} from SKILLS_MOUNT_INPUT_<ID>, ${workspaceFolder}, ${userHome}', async () => {
    await withTempDir('skills-mount-cli-config-', async (dir) => {
      await mkdir(path.join(dir, '.vscode'));
      const file = path.join(dir, '.vscode', 'mcp.json');
      await writeFile(file, await readFile(fixture('vscode-mcp.json')));
      const config = await loadMountConfig({ configPath: file, env: ENV });
      expect(config.origin).toMatch(/VS Code mcp\.json/);
      expect(config.servers.map((server) => server.label)).toEqual(['github-copilot', 'playwright', 'my-skills']);
      expect(config.servers[0]!.config).toEqual({
        kind: 'http',
        url: 'https://api.githubcopilot.com/mcp/',
        headers: { Authorization: 'Bearer ghp_from_env' },
      });
      expect(config.servers[1]!.config).toMatchObject({ args: ['@playwright/mcp@latest', '--output-dir', `${dir}/out`], env: { DEBUG: '1' } });
      expect(config.servers[2]!.config).toMatchObject({ command: 'node', args: ['/home/alex/bin/skills.js'] });
    });
  });

  it('VS Code: an input with no environment variable is reported as missing, naming the input and the variable', async () => {
    const env = { ...ENV, SKILLS_MOUNT_INPUT_GITHUB_TOKEN: undefined };
    await expect(loadMountConfig({ configPath: fixture('vscode-mcp.json'), env })).rejects.toThrow(
      /server "GitHub Copilot": "headers".Authorization: \$\{input:github-token\} asks for input "github-token" \("GitHub Personal Access Token"\): skills-mount never prompts; set the environment variable SKILLS_MOUNT_INPUT_GITHUB_TOKEN/,
    );
  });

  it('VS Code settings.json with an "mcp" section', async () => {
    const config = await loadMountConfig({ configPath: fixture('vscode-settings.json'), env: ENV });
    expect(config.servers).toEqual([{ label: 'fetch', config: { kind: 'stdio', command: 'uvx', args: ['mcp-server-fetch'], env: {}, cwd: undefined } }]);
  });

  it('an invalid file names the line and column', async () => {
    await expect(loadMountConfig({ configPath: fixture('broken-syntax.json'), env: ENV })).rejects.toThrow(
      `config ${fixture('broken-syntax.json')}: not valid JSON at line 5, column 7: expected ',' or '}', found '"args"'`,
    );
  });

  it('"approvedOnly" must be a boolean', () => {
    const text = '{\n  "mcpServers": {\n    "bad": { "command": "b", "approvedOnly": "yes" }\n  }\n}\n';
    expect(() => parseConfigText(text, 'c.json', ENV)).toThrow('config c.json line 3: server "bad": "approvedOnly" must be true or false');
  });

  it('a semantic error names the line of the server', () => {
    const text = '{\n  "mcpServers": {\n    "ok": { "command": "a" },\n    "bad": { "command": "b", "args": "not-a-list" }\n  }\n}\n';
    expect(() => parseConfigText(text, 'c.json', ENV)).toThrow('config c.json line 4: server "bad": "args" must be an array of strings');
  });

  it('labels that collide after normalization are an error naming both', async () => {
    await expect(loadMountConfig({ configPath: fixture('label-collision.json'), env: ENV })).rejects.toThrow(
      /server "my-server": its label "my-server" is already used by config .* server "My Server"/,
    );
  });

  it('a missing environment variable is an error naming it and the field', async () => {
    const env = { ...ENV, GITHUB_TOKEN: undefined };
    const error = await loadMountConfig({ configPath: fixture('claude-desktop.json'), env }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/line 7: server "github": "env".GITHUB_PERSONAL_ACCESS_TOKEN: \$\{GITHUB_TOKEN\} is not set: set the environment variable GITHUB_TOKEN/);
  });

  it('the aliases other tools write: serverUrl for url, "transport" for "type", streamable-http and its spellings for http', async () => {
    await withTempDir('skills-mount-aliases-', async (dir) => {
      const file = path.join(dir, 'mcp.json');
      await writeFile(
        file,
        JSON.stringify({
          mcpServers: {
            a: { serverUrl: 'https://a.example/mcp' },
            b: { transport: 'streamable-http', url: 'https://b.example/mcp' },
            c: { type: 'streamableHttp', url: 'https://c.example/mcp' },
            d: { transport: 'streamable_http', serverUrl: 'https://d.example/mcp' },
            e: { transport: 'sse', url: 'https://e.example/sse' },
          },
        }),
      );
      const config = await loadMountConfig({ configPath: file, env: ENV });
      expect(Object.fromEntries(config.servers.map((server) => [server.label, server.config]))).toMatchObject({
        a: { kind: 'http', url: 'https://a.example/mcp' },
        b: { kind: 'http', url: 'https://b.example/mcp' },
        c: { kind: 'http', url: 'https://c.example/mcp' },
        d: { kind: 'http', url: 'https://d.example/mcp' },
        e: { kind: 'sse', url: 'https://e.example/sse' },
      });
    });
  });

  it('unknown formats and transports are refused with what is expected', () => {
    expect(() => parseConfigText('{"tools": {}}', 'x.json')).toThrow('expected "mcpServers" (Claude Desktop, Cursor, Claude Code) or "servers" (VS Code mcp.json)');
    expect(() => parseConfigText('{"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}', 'x.json')).toThrow(
      '"type": "websocket" is not a transport skills-mount knows; use "stdio", "http" (Streamable HTTP) or "sse"',
    );
    expect(() => parseConfigText('{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}', 'x.json')).toThrow('has both "command" and "url"');
    expect(() => parseConfigText('{"mcpServers": {"!!!": {"command": "x"}}}', 'x.json')).toThrow('no usable directory name');
  });

  it('envFile (VS Code, Cursor) is read relative to the workspace, env wins over it', async () => {
    await withTempDir('skills-mount-cli-config-', async (dir) => {
      await writeFile(path.join(dir, '.env'), '# comment\nTOKEN="from-file" # an inline comment\nexport OTHER=two\n' + "QUOTED='a # b'\n");
      const file = path.join(dir, 'mcp.json');
      await writeFile(file, JSON.stringify({ servers: { s: { command: 'x', envFile: '${workspaceFolder}/.env', env: { OTHER: 'three' } } } }));
      const config = await loadMountConfig({ configPath: file, env: ENV });
      expect(config.servers[0]!.config).toMatchObject({ env: { TOKEN: 'from-file', OTHER: 'three', QUOTED: 'a # b' } });
    });
  });
});

describe('sources: default file, demo, --server, --only', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('skills-mount-cli-config-');
  });
  afterAll(() => removeDir(dir));

  it('without a config file or --server: the demo; a missing explicit --config is an error', async () => {
    const env = { ...ENV, XDG_CONFIG_HOME: path.join(dir, 'nothing') };
    expect(defaultConfigPath(env)).toBe(path.join(dir, 'nothing', 'skills-mount', 'config.json'));
    const config = await loadMountConfig({ env });
    expect(config.servers.map((server) => server.label)).toEqual(['demo']);
    await expect(loadMountConfig({ configPath: path.join(dir, 'missing.json'), env })).rejects.toThrow('no such file');
  });

  it('--server alone mounts just those servers; with --config, both, and labels must not collide', async () => {
    const env = { ...ENV, XDG_CONFIG_HOME: dir };
    await mkdir(path.join(dir, 'skills-mount'), { recursive: true });
    await writeFile(path.join(dir, 'skills-mount', 'config.json'), '{"mcpServers": {"default-one": {"command": "x"}}}');
    const flagsOnly = await loadMountConfig({ serverFlags: ['local=node "my server.js" --flag', 'web=https://example.com/mcp'], env });
    expect(flagsOnly.origin).toBe('the command line');
    expect(flagsOnly.servers).toEqual([
      { label: 'local', config: { kind: 'stdio', command: 'node', args: ['my server.js', '--flag'], env: {}, cwd: undefined } },
      { label: 'web', config: { kind: 'http', url: 'https://example.com/mcp', headers: {} } },
    ]);
    const both = await loadMountConfig({ configPath: fixture('cursor-mcp.json'), serverFlags: ['extra=sse+http://127.0.0.1:9/sse'], env });
    expect(both.servers.map((server) => [server.label, server.config.kind])).toEqual([
      ['docs', 'http'],
      ['linear', 'stdio'],
      ['extra', 'sse'],
    ]);
    await expect(loadMountConfig({ configPath: fixture('cursor-mcp.json'), serverFlags: ['docs=x'], env })).rejects.toThrow(
      /--server docs: its label "docs" is already used by config/,
    );
  });

  it('--only selects by label or by the key as written, and names what exists when nothing matches', async () => {
    const config = await loadMountConfig({ configPath: fixture('claude-desktop.json'), only: ['Brave Search,github'], env: ENV });
    expect(config.servers.map((server) => server.label)).toEqual(['github', 'brave-search']);
    await expect(loadMountConfig({ configPath: fixture('claude-desktop.json'), only: ['nope'], env: ENV })).rejects.toThrow(
      '--only: no server "nope" in',
    );
    await expect(loadMountConfig({ configPath: fixture('claude-desktop.json'), only: ['nope'], env: ENV })).rejects.toThrow(
      'available: filesystem, github, brave-search',
    );
  });

  it('--only skips expanding the variables of servers it leaves out', async () => {
    const env = { ...ENV, GITHUB_TOKEN: undefined, BRAVE_API_KEY: undefined };
    const config = await loadMountConfig({ configPath: fixture('claude-desktop.json'), only: ['filesystem'], env });
    expect(config.servers.map((server) => server.label)).toEqual(['filesystem']);
  });
});

describe('--server values', () => {
  it('splits the command like a shell, with quotes and backslashes', () => {
    expect(splitWords(`npx -y 'a b' "c \\"d\\"" e\\ f`, 'x')).toEqual(['npx', '-y', 'a b', 'c "d"', 'e f']);
    expect(() => splitWords(`npx 'open`, '--server a')).toThrow(`--server a: unterminated ' quote`);
    // A shell would have expanded an unquoted ~, had the whole value not been quoted.
    expect(splitWords(`skills-serve ~/skills ~ a~b '~/q' \\~/e x~/y`, 'x', '/home/me')).toEqual(['skills-serve', '/home/me/skills', '/home/me', 'a~b', '~/q', '~/e', 'x~/y']);
  });

  it('refuses invalid labels with a suggestion, and empty commands', () => {
    expect(() => parseServerFlag('My Docs=npx docs')).toThrow('label "My Docs" is not a valid directory name: use [a-z0-9][a-z0-9_-]*, at most 64 characters (e.g. "my-docs")');
    expect(() => parseServerFlag('docs=')).toThrow('nothing after "="');
    expect(() => parseServerFlag('just-a-command')).toThrow('expected LABEL=COMMAND [ARGS...] or LABEL=URL');
  });
});

describe('label normalization', () => {
  it.each([
    ['GitHub Copilot', 'github-copilot'],
    ['my.server', 'my-server'],
    ['  Spaces  and   tabs\t', 'spaces-and-tabs'],
    ['ACME_Tools', 'acme_tools'],
    ['café', 'cafe'],
    ['@scope/pkg', 'scope-pkg'],
    ['--x--', 'x'],
    ['!!!', ''],
  ])('%j -> %j', (key, label) => {
    expect(normalizeLabel(key)).toBe(label);
  });

  it('never exceeds 64 characters', () => {
    expect(normalizeLabel('a'.repeat(100))).toHaveLength(64);
  });
});

describe('variable expansion', () => {
  const context: ExpansionContext = {
    env: { A: 'alpha', EMPTY: '' },
    userHome: '/home/u',
    workspaceFolder: '/ws',
    inputs: new Map([['key', { description: 'The key' }]]),
  };
  const expand = (text: string) => expandVariables(text, context, 'here');

  it('expands every form', () => {
    expect(expand('${A}-${env:A}-${userHome}-${workspaceFolder}')).toBe('alpha-alpha-/home/u-/ws');
    expect(expand('${EMPTY:-fallback} ${MISSING:-x/y} ${A:-unused}')).toBe('fallback x/y alpha');
    expect(expand('no references, $A and $ {A} stay')).toBe('no references, $A and $ {A} stay');
    expect(expandVariables('${input:key}', { ...context, env: { SKILLS_MOUNT_INPUT_KEY: 'k' } }, 'here')).toBe('k');
  });

  it('names what is missing, and refuses what it does not understand', () => {
    expect(() => expand('x ${NOPE} y')).toThrow('here: ${NOPE} is not set: set the environment variable NOPE');
    expect(() => expand('${env:NOPE}')).toThrow('${env:NOPE} is not set');
    expect(() => expand('${input:other}')).toThrow('(and no input with this id is declared in "inputs")');
    expect(() => expand('${command:pickFile}')).toThrow('is not a variable skills-mount understands');
  });

  it('maps input ids to environment variable names', () => {
    expect(inputVariableName('github-token')).toBe('SKILLS_MOUNT_INPUT_GITHUB_TOKEN');
    expect(inputVariableName('perplexity.key')).toBe('SKILLS_MOUNT_INPUT_PERPLEXITY_KEY');
  });
});

describe('JSONC', () => {
  it('accepts comments and trailing commas, and leaves strings alone', () => {
    expect(parseJsonc('{\n // c\n "a": "x // not a comment /* nor this */", /* b */ "b": [1, 2,],\n}')).toEqual({
      a: 'x // not a comment /* nor this */',
      b: [1, 2],
    });
    expect(parseJsonc('\uFEFF{"escaped": "q\\"//"}')).toEqual({ escaped: 'q"//' });
    expect(parseJsonc('/* only */ [1, {"a": null,},] // end')).toEqual([1, { a: null }]);
  });

  it('reads every key as data, as JSON.parse does: "__proto__" is a server name, not a prototype', () => {
    const value = parseJsonc('{"mcpServers": {"__proto__": {"command": "x"}}}') as { mcpServers: object };
    expect(Object.keys(value.mcpServers)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(value.mcpServers)).toBe(Object.prototype);
  });

  it.each([
    ['{\n  "a": 1\n  "b": 2\n}', 3, 3, `expected ',' or '}', found '"b"'`],
    ['{"a": [1, 2}', 1, 12, `expected ',' or ']', found '}'`],
    ['{"a": [1, 2', 1, 12, `expected ']' to close the array, found the end of the file`],
    ['{"a": 1', 1, 8, `expected '}' to close the object, found the end of the file`],
    ['', 1, 1, 'expected a value, found the end of the file'],
    ['{"a": }', 1, 7, `expected a value, found '}'`],
    ['{\n  mcpServers: {}\n}', 2, 3, `unexpected 'mcpServers' (names and strings are written in double quotes)`],
    ['{"a": 1}\n}', 2, 1, `unexpected '}' after the end of the JSON value`],
    ['{"cwd": "C:\\mcp"}', 1, 9, 'this string has an invalid escape (a backslash is written \\\\)'],
    ['{"a": 1 /* open', 1, 9, 'a /* comment is not closed with */'],
    ['\uFEFF{,}', 1, 2, `expected a value, found ','`],
  ])('a syntax error in %j is at line %i, column %i: %s', (text, line, column, message) => {
    const error = (() => {
      try {
        parseConfigText(text, 'c.json', ENV);
      } catch (caught) {
        return caught;
      }
      throw new Error('parsed');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(`config c.json: not valid JSON at line ${line}, column ${column}: ${message}`);
  });

  it('workspaceFolder is the folder holding .vscode, else the config folder', () => {
    expect(workspaceFolderFor('/p/.vscode/mcp.json')).toBe('/p');
    expect(workspaceFolderFor('/p/conf/mcp.json')).toBe('/p/conf');
  });
});
