// The generated test corpus: deterministic per seed, every skill conformant, and the cases it
// claims (limits, nesting, prefixes, odd names, binaries) really on disk. Checks are independent
// of the generator: own walk, own CRC32, own PDF/sfnt parsing.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFrontmatter } from '../../src/format/frontmatter.js';
import { frontmatterLengthProblem, frontmatterStructureProblem } from '../../src/format/skill-rules.js';
import { makeTempDir, removeDir, withTempDir } from '../support/temp-dir.js';
import { corpusDirs, TEST_CORPUS_LANDMARKS as L, testCorpusDir, writeTestCorpus, type TestCorpusSummary } from '../support/test-corpus.mjs';

const MIB_16 = 16 * 1024 * 1024;

interface OnDisk {
  rel: string;
  bytes: Buffer;
  mode: number;
}

async function walk(root: string, prefix = ''): Promise<OnDisk[]> {
  const out: OnDisk[] = [];
  for (const entry of await readdir(join(root, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await walk(root, rel)));
    else if (entry.isFile()) out.push({ rel, bytes: await readFile(join(root, rel)), mode: (await stat(join(root, rel))).mode });
    else throw new Error(`unexpected entry ${rel}`);
  }
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

function treeDigest(files: OnDisk[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file.rel}\0${file.bytes.length}\0`).update(file.bytes);
  return hash.digest('hex');
}

/** Bitwise CRC-32 (IEEE), deliberately not table-driven like the generator's. */
function crc32(bytes: Uint8Array): number {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

const filesUnder = (files: OnDisk[], dir: string): OnDisk[] => files.filter((f) => f.rel.startsWith(`${dir}/`));
const bytesOf = (files: OnDisk[]): number => files.reduce((sum, f) => sum + f.bytes.length, 0);

describe('the generated test corpus', () => {
  let base: string;
  let files: OnDisk[];
  let summary: TestCorpusSummary;
  let generationMs: number;
  let skillDirs: string[];

  beforeAll(async () => {
    base = await makeTempDir('test-corpus-unit-');
    const started = performance.now();
    summary = await writeTestCorpus(join(base, 'a'));
    generationMs = performance.now() - started;
    files = await walk(join(base, 'a'));
    skillDirs = files.filter((f) => f.rel.endsWith('/SKILL.md')).map((f) => f.rel.slice(0, -'/SKILL.md'.length));
  });
  afterAll(() => removeDir(base));

  it('is generated fast enough to build per test process', () => {
    // Measured at ~0.3 s on a 2-core machine; the budget is 2 s, with slack for a loaded CI runner.
    expect(generationMs).toBeLessThan(5000);
  });

  it('reports what it wrote', () => {
    expect(summary).toEqual({ skills: skillDirs.length, files: files.length, bytes: bytesOf(files) });
    expect(skillDirs.length).toBeGreaterThanOrEqual(12);
    expect(skillDirs.length).toBeLessThanOrEqual(16);
  });

  it('is byte-identical for the same seed and differs for another', async () => {
    await writeTestCorpus(join(base, 'b'), { seed: 2640 });
    await writeTestCorpus(join(base, 'c'), { seed: 2641 });
    const again = await walk(join(base, 'b'));
    const other = await walk(join(base, 'c'));
    expect(treeDigest(again)).toBe(treeDigest(files));
    expect(treeDigest(other)).not.toBe(treeDigest(files));
    // Paths are the same for every seed; contents are not.
    expect(other.map((f) => f.rel)).toEqual(files.map((f) => f.rel));
    const changed = other.filter((f, i) => !f.bytes.equals(files[i]!.bytes));
    expect(changed.length).toBeGreaterThan(files.length / 2);
  });

  it('has only SKILL.md files that pass the Agent Skills rules, names equal to their directories', () => {
    for (const dir of skillDirs) {
      const text = files.find((f) => f.rel === `${dir}/SKILL.md`)!.bytes.toString('utf8');
      const frontmatter = parseFrontmatter(text);
      const directoryName = dir.slice(dir.lastIndexOf('/') + 1);
      expect(frontmatterStructureProblem(frontmatter, directoryName), dir).toBeUndefined();
      expect(frontmatterLengthProblem(frontmatter), dir).toBeUndefined();
      expect(frontmatter.name).toBe(directoryName);
    }
  });

  it('uses the optional frontmatter fields: license, compatibility, metadata, allowed-tools as a string and as a list', () => {
    const all = skillDirs.map((dir) => parseFrontmatter(files.find((f) => f.rel === `${dir}/SKILL.md`)!.bytes.toString('utf8')));
    expect(all.some((fm) => typeof fm.license === 'string')).toBe(true);
    expect(all.some((fm) => typeof fm.compatibility === 'string')).toBe(true);
    expect(all.some((fm) => typeof fm.metadata === 'object' && Object.keys(fm.metadata as object).length > 0)).toBe(true);
    expect(all.some((fm) => typeof fm['allowed-tools'] === 'string')).toBe(true);
    expect(all.some((fm) => Array.isArray(fm['allowed-tools']))).toBe(true);
  });

  it('keeps every skill within the per-skill limits, with one at 512 files, one a byte under 16 MiB and one at 16 MiB', () => {
    for (const dir of skillDirs) {
      const mine = filesUnder(files, dir);
      expect(mine.length, dir).toBeLessThanOrEqual(512);
      expect(bytesOf(mine), dir).toBeLessThanOrEqual(MIB_16);
    }
    expect(filesUnder(files, L.maxFilesSkill.dir)).toHaveLength(512);
    expect(L.maxFilesSkill.files).toBe(512);
    expect(bytesOf(filesUnder(files, L.justUnderBytesSkill.dir))).toBe(MIB_16 - 1);
    expect(L.justUnderBytesSkill.bytes).toBe(MIB_16 - 1);
    expect(bytesOf(filesUnder(files, L.atBytesSkill.dir))).toBe(MIB_16);
    expect(L.atBytesSkill.bytes).toBe(MIB_16);
  });

  it('has a nested skill and skills under organizational prefixes', () => {
    const nested = skillDirs.filter((dir) => skillDirs.some((parent) => dir.startsWith(`${parent}/`)));
    expect(nested).toContain(L.nestedSkill);
    expect(skillDirs).toContain(L.nestedParent);
    // A prefix is a directory on the way to skills that is not a skill itself.
    const prefixed = skillDirs.filter((dir) => dir.split('/').length >= 3 && !skillDirs.some((other) => dir.startsWith(`${other}/`)));
    expect(prefixed.sort()).toEqual([...L.prefixedSkills].sort());
    expect(skillDirs).not.toContain('acme');
    expect(skillDirs).not.toContain('acme/billing');
  });

  it('has non-ASCII, spaced and deep names, each a valid URI path segment', () => {
    const rels = files.map((f) => f.rel);
    for (const rel of [...L.nonAsciiFiles, L.spacedFile, L.deepFile]) expect(rels).toContain(rel);
    expect(rels.filter((rel) => /[^\x00-\x7f]/.test(rel)).length).toBeGreaterThanOrEqual(3);
    expect(rels.some((rel) => /[\u4e00-\u9fff]/.test(rel))).toBe(true);
    for (const rel of rels) {
      for (const segment of rel.split('/')) {
        expect(segment.length, rel).toBeGreaterThan(0);
        expect(segment.startsWith('.'), rel).toBe(false);
        expect(segment.includes('\0'), rel).toBe(false);
        expect(segment.normalize('NFC'), rel).toBe(segment);
      }
      const uri = `skill://${rel.split('/').map(encodeURIComponent).join('/')}`;
      expect(new URL(uri).href, rel).toBe(uri);
    }
    const skillOf = (rel: string) => skillDirs.filter((dir) => rel.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length)[0]!;
    const depth = (rel: string) => rel.slice(skillOf(rel).length + 1).split('/').length - 1;
    expect(depth(L.deepFile)).toBeGreaterThanOrEqual(5);
  });

  it('has markdown of several sizes, an empty file, a one-byte file and scripts that are not executable', () => {
    const size = (rel: string) => files.find((f) => f.rel === rel)!.bytes.length;
    expect(size(`${L.tinySkill}/SKILL.md`)).toBeLessThan(256);
    expect(size(L.mediumMarkdown)).toBeGreaterThanOrEqual(2 * 1024);
    expect(size(L.mediumMarkdown)).toBeLessThan(16 * 1024);
    expect(size(L.largeMarkdown)).toBeGreaterThanOrEqual(200 * 1024);
    expect(size(L.largeMarkdown)).toBeLessThan(256 * 1024);
    expect(size(L.emptyFile)).toBe(0);
    expect(size(L.oneByteFile)).toBe(1);
    expect(files.some((f) => f.rel.endsWith('.py'))).toBe(true);
    expect(files.some((f) => f.rel.endsWith('.sh'))).toBe(true);
    for (const rel of L.scripts) expect(files.find((f) => f.rel === rel)!.bytes.subarray(0, 2).toString()).toBe('#!');
    for (const file of files) expect(file.mode & 0o111, file.rel).toBe(0);
  });

  it('has a valid PNG: signature, chunk CRCs, IHDR first, IEND last, image data of the declared size', () => {
    const png = files.find((f) => f.rel === L.png)!.bytes;
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const chunks: Array<{ type: string; data: Buffer }> = [];
    for (let at = 8; at < png.length; ) {
      const length = png.readUInt32BE(at);
      const typeAndData = png.subarray(at + 4, at + 8 + length);
      expect(png.readUInt32BE(at + 8 + length), `CRC of chunk at ${at}`).toBe(crc32(typeAndData));
      chunks.push({ type: typeAndData.subarray(0, 4).toString('latin1'), data: typeAndData.subarray(4) });
      at += 12 + length;
    }
    expect(chunks[0]!.type).toBe('IHDR');
    expect(chunks.at(-1)!.type).toBe('IEND');
    const ihdr = chunks[0]!.data;
    const [width, height, bitDepth, colourType] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9]];
    expect([bitDepth, colourType]).toEqual([8, 6]);
    const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
    expect(raw.length).toBe(height * (1 + width * 4));
  });

  it('has a PDF whose xref offsets point at its objects, and fonts with sfnt table directories', () => {
    const pdf = files.find((f) => f.rel === L.pdf)!.bytes;
    expect(pdf.subarray(0, 9).toString('latin1')).toBe('%PDF-1.7\n');
    expect(pdf.subarray(-6).toString('latin1')).toBe('%%EOF\n');
    const text = pdf.toString('latin1');
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)![1]);
    expect(text.slice(startxref, startxref + 5)).toBe('xref\n');
    const entries = [...text.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    expect(entries.length).toBeGreaterThan(3);
    entries.forEach((offset, i) => expect(text.slice(offset).startsWith(`${i + 1} 0 obj`)).toBe(true));
    expect(text).toContain('/Subtype /Image');
    expect(pdf.some((byte) => byte >= 0x80)).toBe(true);

    for (const rel of L.fonts) {
      const font = files.find((f) => f.rel === rel)!.bytes;
      expect([0x00010000, 0x4f54544f]).toContain(font.readUInt32BE(0));
      const numTables = font.readUInt16BE(4);
      const tags: string[] = [];
      for (let i = 0; i < numTables; i++) {
        const record = 12 + 16 * i;
        tags.push(font.subarray(record, record + 4).toString('latin1'));
        const [offset, length] = [font.readUInt32BE(record + 8), font.readUInt32BE(record + 12)];
        expect(offset + length, `${rel} table ${tags[i]}`).toBeLessThanOrEqual(font.length);
        if (tags[i] === 'head') expect(font.readUInt32BE(offset + 12)).toBe(0x5f0f3cf5);
      }
      expect(tags).toEqual([...tags].sort());
      expect(tags).toContain('head');
    }
  });
});

describe('testCorpusDir and corpusDirs', () => {
  it('generates the default corpus once per process, under a name that says seed and pid', async () => {
    const dir = await testCorpusDir();
    expect(dir).toBe(join(tmpdir(), `skills-mount-test-corpus-2640-${process.pid}`));
    expect(await testCorpusDir()).toBe(dir);
    const onDisk = await walk(dir);
    await withTempDir('test-corpus-unit-', async (scratch) => {
      const fresh = join(scratch, 'x');
      await writeTestCorpus(fresh);
      expect(treeDigest(onDisk)).toBe(treeDigest(await walk(fresh)));
    });
  });

  it('offers the generated corpus, and an external one only when SKILLS_MOUNT_CORPUS names a directory', async () => {
    const saved = process.env.SKILLS_MOUNT_CORPUS;
    try {
      delete process.env.SKILLS_MOUNT_CORPUS;
      expect(corpusDirs().map((c) => c.name)).toEqual(['generated']);
      process.env.SKILLS_MOUNT_CORPUS = join(tmpdir(), 'no-such-corpus-dir');
      expect(corpusDirs().map((c) => c.name)).toEqual(['generated']);
      process.env.SKILLS_MOUNT_CORPUS = tmpdir();
      const corpora = corpusDirs();
      expect(corpora.map((c) => c.name)).toEqual(['generated', 'external']);
      expect(await corpora[1]!.dir()).toBe(tmpdir());
      expect(await corpora[0]!.dir()).toBe(await testCorpusDir());
    } finally {
      if (saved === undefined) delete process.env.SKILLS_MOUNT_CORPUS;
      else process.env.SKILLS_MOUNT_CORPUS = saved;
    }
  });
});
