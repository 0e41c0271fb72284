// `skills-mount link` as a user runs it where no FUSE is (the built CLI, the reference server it
// starts itself), on a SKILL.md saved on Windows: CRLF line endings, a BOM, a last line with no
// newline. The linked SKILL.md's body is the served bytes exactly; its frontmatter is CRLF too.
import { spawn } from 'node:child_process';
import { mkdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseFrontmatter } from '../../src/format/frontmatter.js';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { SKILLS_SERVE } from '../support/http-server.js';
import { writeTree } from '../support/skill-builder.js';
import { makeTempDir } from '../support/temp-dir.js';

const SKILLS_MOUNT = fileURLToPath(new URL('../../dist/cli/skills-mount.js', import.meta.url));
const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await removeReadOnlyTree(dir);
});

function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('skills-mount link on a CRLF SKILL.md, no FUSE', () => {
  it('the body on disk is the served body byte for byte; the frontmatter keeps CRLF; verify --links passes', async () => {
    const dir = await makeTempDir('skills-mount-link-body-cli-');
    made.push(dir);
    const served = path.join(dir, 'skills');
    const body = '# PDF\r\n\r\nRun `extract.py`.\r\n\r\n---\r\nnot frontmatter\r\nthe last line';
    const skillMd = `\uFEFF---\r\nname: pdf\r\ndescription: Reads PDFs.\r\nallowed-tools: Bash\r\n---\r\n${body}`;
    await writeTree(path.join(served, 'pdf'), { 'SKILL.md': skillMd });
    const home = path.join(dir, 'home');
    await mkdir(home, { mode: 0o700 });
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_CACHE_HOME: path.join(home, '.cache') };
    const server = `docs=${process.execPath} ${SKILLS_SERVE} ${served}`;
    const approved = await cli(env, 'approve', 'docs/pdf', '--server', server, '--yes');
    expect(approved.code, approved.stderr).toBe(0);
    const linked = await cli(env, 'link', 'claude-code', '--server', server);
    expect(linked.code, linked.stderr).toBe(0);
    const entry = path.join(home, '.claude', 'skills', 'pdf');
    expect(await readlink(entry)).toContain('/objects/docs/');
    const written = await readFile(path.join(entry, 'SKILL.md'));
    const bodyBytes = Buffer.from(body, 'utf8');
    expect(written.subarray(written.length - bodyBytes.length).equals(bodyBytes), JSON.stringify(written.toString('utf8'))).toBe(true);
    const head = written.subarray(0, written.length - bodyBytes.length).toString('utf8');
    expect(head.startsWith('---\r\n')).toBe(true);
    expect(head.endsWith('\r\n---\r\n')).toBe(true);
    expect(head).not.toMatch(/(?<!\r)\n/);
    const frontmatter = parseFrontmatter(written.toString('utf8'));
    expect(frontmatter).toMatchObject({ name: 'pdf', description: '[from MCP server docs] Reads PDFs.' });
    expect(frontmatter).not.toHaveProperty('allowed-tools');
    expect(await cli(env, 'verify', '--links')).toMatchObject({ code: 0, stdout: expect.stringMatching(/1 linked entry in 1 root, 1 files: verified/) });
  });
});
