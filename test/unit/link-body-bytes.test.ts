// A linked entry's SKILL.md differs from the approved one in its frontmatter block only: every byte
// after the closing `---` line (and that line's ending) is the approved byte, whatever the file's
// line endings (CRLF, LF, mixed), a BOM before it, a last line with no newline, or bytes that are
// not UTF-8. The frontmatter written anew keeps the file's own line-ending style (that of its
// opening `---` line), and reads as the same data to the YAML readers harnesses use, gray-matter's
// way of cutting the block out included.
import { createHash } from 'node:crypto';
import { readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import jsYaml from 'js-yaml';
import { afterEach, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/approvals/approval-store.js';
import { resourcesDigest } from '../../src/catalog/resources-digest.js';
import { parseFrontmatter } from '../../src/format/frontmatter.js';
import { entryFrontmatter, transformSkillMd, transformSkillMdBytes } from '../../src/link/entry-transform.js';
import { syncLinks, type RootRequest } from '../../src/link/link-sync.js';
import { verifyLinks } from '../../src/link/link-verify.js';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { makeTempDir } from '../support/temp-dir.js';

const origin = { entryName: 'pdf', label: 'docs', skillUri: 'skill://pdf/SKILL.md' };
const grants = { allowedTools: false };
const BOM = '\uFEFF';

/** SKILL.md texts as authors' editors save them: a frontmatter (with these line endings) and a body, kept apart so the body is known. */
const CASES: ReadonlyArray<{ what: string; head: string; body: string; eol: '\n' | '\r\n' }> = [
  { what: 'CRLF throughout', head: '---\r\nname: pdf\r\ndescription: Reads PDFs.\r\nallowed-tools: Bash\r\n---\r\n', body: '# PDF\r\n\r\nUse it.\r\n', eol: '\r\n' },
  { what: 'a UTF-8 BOM, CRLF', head: `${BOM}---\r\nname: pdf\r\ndescription: Reads PDFs.\r\n---\r\n`, body: '# PDF\r\nUse it.\r\n', eol: '\r\n' },
  { what: 'a UTF-8 BOM, LF', head: `${BOM}---\nname: pdf\ndescription: Reads PDFs.\n---\n`, body: '# PDF\n', eol: '\n' },
  { what: 'CRLF frontmatter, LF and lone CR in the body', head: '---\r\nname: pdf\ndescription: Reads PDFs.\r\n---\r\n', body: '\n# PDF\nold\rmac\r\n---\r\nnot frontmatter\n', eol: '\r\n' },
  { what: 'LF frontmatter, CRLF body', head: '---\nname: pdf\r\ndescription: Reads PDFs.\n---\n', body: '# PDF\r\n\r\n', eol: '\n' },
  { what: 'a last line with no newline (CRLF)', head: '---\r\nname: pdf\r\ndescription: Reads PDFs.\r\n---\r\n', body: '# PDF\r\nthe end', eol: '\r\n' },
  { what: 'a last line with no newline (LF)', head: '---\nname: pdf\ndescription: Reads PDFs.\n---\n', body: 'the end', eol: '\n' },
  { what: 'a closing line with blanks after ---, CRLF', head: '---  \r\nname: pdf\r\ndescription: Reads PDFs.\r\n--- \t\r\n', body: '\r\n  indented\t\r\n', eol: '\r\n' },
  { what: 'the closing --- the last line, no newline', head: '---\r\nname: pdf\r\ndescription: Reads PDFs.\r\n---', body: '', eol: '\r\n' },
  { what: 'an empty body after CRLF', head: '---\r\nname: pdf\r\ndescription: Reads PDFs.\r\n---\r\n', body: '', eol: '\r\n' },
];

/** The frontmatter block as gray-matter cuts it out (after the opening `---`, up to the first "\n---"), read with js-yaml, as harnesses built on it do. */
function grayMatterData(markdown: string): unknown {
  const text = markdown.startsWith(BOM) ? markdown.slice(1) : markdown;
  expect(text.startsWith('---')).toBe(true);
  const rest = text.slice(3);
  const close = rest.indexOf('\n---');
  return jsYaml.load(rest.slice(0, close));
}

describe('the entry SKILL.md keeps the body byte for byte', () => {
  for (const { what, head, body, eol } of CASES) {
    it(`${what}`, () => {
      const approved = `${head}${body}`;
      const entry = transformSkillMd(approved, origin, grants);
      expect(entry.endsWith(body), JSON.stringify(entry)).toBe(true);
      const written = entry.slice(0, entry.length - body.length);
      // The frontmatter written anew: the file's own line endings, one style throughout, then the body.
      expect(written.startsWith(`---${eol}`), JSON.stringify(written)).toBe(true);
      expect(written.endsWith(`${eol}---${eol}`), JSON.stringify(written)).toBe(true);
      const lineEnds = written.match(/\r?\n/g) ?? [];
      expect(new Set(lineEnds), JSON.stringify(written)).toEqual(new Set([eol]));
      expect(written).not.toMatch(/\r(?!\n)/);
      // Read as harnesses read it: the same data as the transform meant, allowed-tools held back.
      const data = entryFrontmatter(approved, origin, grants);
      expect(parseFrontmatter(entry)).toEqual(data);
      expect(grayMatterData(entry)).toEqual(data);
      expect(data).not.toHaveProperty('allowed-tools');
      // The bytes: the same, counted in UTF-8.
      const bytes = transformSkillMdBytes(Buffer.from(approved, 'utf8'), origin, grants);
      expect(bytes.subarray(bytes.length - Buffer.byteLength(body)).equals(Buffer.from(body, 'utf8'))).toBe(true);
      expect(bytes.toString('utf8')).toBe(entry);
    });
  }

  it('bytes that are not UTF-8 in the body (Latin-1, a cut sequence) stay as they are', () => {
    const head = Buffer.from('---\r\nname: pdf\r\ndescription: Reads PDFs.\r\n---\r\n', 'utf8');
    const body = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a, 0xe2, 0x82, 0x0d, 0x0a, 0xff, 0xfe]);
    const entry = transformSkillMdBytes(Buffer.concat([head, body]), origin, grants);
    expect(entry.subarray(entry.length - body.length).equals(body)).toBe(true);
    expect(parseFrontmatter(entry.toString('utf8'))).toEqual(entryFrontmatter(head.toString('utf8'), origin, grants));
  });
});

describe('through link: the linked SKILL.md on disk', () => {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await removeReadOnlyTree(dir);
  });

  it('a CRLF SKILL.md with a BOM, a body ending without a newline and a byte that is not UTF-8: the body on disk is the approved bytes; verify --links passes', async () => {
    const head = Buffer.from(`${BOM}---\r\nname: pdf\r\ndescription: Reads PDFs.\r\n---\r\n`, 'utf8');
    const body = Buffer.concat([Buffer.from('# PDF\r\n\r\nUse it\n', 'utf8'), Buffer.from([0xe9]), Buffer.from('\r\nno newline at the end', 'utf8')]);
    const bytes = Buffer.concat([head, body]);
    const resources = [{ uri: 'skill://pdf/SKILL.md', digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, sizeBytes: bytes.length }];
    const approval: Approval = {
      label: 'docs',
      skillUri: 'skill://pdf/SKILL.md',
      name: 'pdf',
      resources,
      resourcesDigest: resourcesDigest(resources),
      approvedAt: '2026-12-01T00:00:00.000Z',
      allowedToolsApproved: false,
      allowedTools: null,
      execApproved: false,
      revokedAt: null,
    };
    const dir = await makeTempDir('skills-mount-link-body-');
    made.push(dir);
    const store = path.join(dir, 'links');
    const root = path.join(dir, 'home', '.claude', 'skills');
    const request: RootRequest = { root, harness: 'claude-code', scope: 'user' };
    const [report] = await syncLinks({ store, approvals: [approval], content: { serves: () => true, missing: () => '', read: async () => bytes }, log: () => {}, link: [request] });
    expect(report!.problems).toEqual([]);
    expect(await readlink(path.join(root, 'pdf'))).toContain('/objects/docs/');
    const written = await readFile(path.join(root, 'pdf', 'SKILL.md'));
    expect(written.subarray(written.length - body.length).equals(body)).toBe(true);
    const text = written.toString('utf8');
    expect(text.slice(0, text.indexOf('---\r\n# PDF'))).not.toMatch(/(?<!\r)\n/);
    expect(parseFrontmatter(text)).toMatchObject({ name: 'pdf', description: '[from MCP server docs] Reads PDFs.' });
    expect((await verifyLinks(store, [approval])).problems).toEqual([]);
  });
});
