import { describe, expect, it } from 'vitest';
import { GeneratedDocument } from '../../src/fs/generated-document.js';
import { renderSkillsJson, skillsJsonParts } from '../../src/fs/skills-json.js';
import type { CatalogSummary, SkillSummary } from '../../src/catalog/server-catalog.js';
import { sha256 } from '../support/digest.mjs';

function whole(rendering: { length: number; slice(position: number, length: number): Buffer }, readBytes: number): Buffer {
  const parts: Buffer[] = [];
  for (let position = 0; position < rendering.length; position += readBytes) parts.push(Buffer.from(rendering.slice(position, readBytes)));
  return Buffer.concat(parts);
}

describe('GeneratedDocument', () => {
  it('serves the text padded to the step, byte for byte at any read size, with the digest of exactly those bytes', async () => {
    // Parts large enough to make several chunks, with multi-byte characters across chunk edges.
    const parts = Array.from({ length: 40 }, (_, i) => `${i}:${'é'.repeat(10_000)}${'x'.repeat(i)}`);
    const document = new GeneratedDocument(() => parts, { stepBytes: 16 * 1024, ttlMs: 1_000, kernelHoldMs: 30_000, now: () => 0 });
    const rendering = await document.reported();
    const text = Buffer.from(parts.join(''), 'utf8');
    expect(rendering.length % (16 * 1024)).toBe(0);
    expect(rendering.length).toBeGreaterThan(text.length);
    const expected = Buffer.concat([text, Buffer.alloc(rendering.length - text.length - 1, ' '), Buffer.from('\n')]);
    for (const readBytes of [7, 4096, 131_072, 1 << 20]) expect(whole(rendering, readBytes).equals(expected)).toBe(true);
    expect(rendering.digest).toBe(sha256(expected));
    expect(rendering.slice(rendering.length, 10).length).toBe(0);
  });

  it('renders once per TTL however many callers ask at once, and pauses between slices', async () => {
    let nowMs = 0;
    let renders = 0;
    let turnsDuringRender = 0;
    const parts = function* () {
      renders += 1;
      for (let i = 0; i < 50; i++) {
        const until = performance.now() + 1;
        while (performance.now() < until);
        yield `part ${i}\n`;
        yield '';
      }
    };
    const document = new GeneratedDocument(parts, { stepBytes: 4096, ttlMs: 1_000, kernelHoldMs: 30_000, now: () => nowMs });
    const ticker = setInterval(() => (turnsDuringRender += 1), 0);
    const opened = await Promise.all([document.reported(), document.opened(), document.opened()]);
    clearInterval(ticker);
    expect(renders).toBe(1);
    // 50 ms of work in 8 ms slices: the event loop ran other work in between.
    expect(turnsDuringRender).toBeGreaterThan(2);
    expect(new Set(opened.map((rendering) => rendering.digest)).size).toBe(1);
    nowMs += 500;
    await document.opened();
    expect(renders).toBe(1);
    nowMs += 600;
    await document.opened();
    expect(renders).toBe(2);
  });

  it('a rendering that outgrew the reported size is not served until getattr reports the new size', async () => {
    let nowMs = 0;
    let text = 'small';
    const document = new GeneratedDocument(() => [text], { stepBytes: 64, ttlMs: 1_000, kernelHoldMs: 30_000, now: () => nowMs });
    const first = await document.reported();
    expect(first.length).toBe(64);
    text = 'still small';
    nowMs += 2_000;
    const fits = await document.opened();
    expect(fits.length).toBe(64);
    expect(whole(fits, 64).toString().trimEnd()).toBe('still small');
    text = 'y'.repeat(100);
    nowMs += 2_000;
    const pinned = await document.opened();
    expect(pinned.length).toBe(64);
    expect(whole(pinned, 64).toString().trimEnd()).toBe('small');
    const grown = await document.reported();
    expect(grown.length).toBe(128);
    expect(whole(await document.opened(), 128).toString().trimEnd()).toBe(text);
  });
});

describe('skillsJsonParts', () => {
  const skill = (name: string, path: string, extra: Partial<SkillSummary> = {}): SkillSummary => ({
    name,
    description: `about ${name} \u2028 "quoted"`,
    uri: `skill://${path}/SKILL.md`,
    path,
    digest: undefined,
    integrity: 'verified',
    declined: undefined,
    rejected: undefined,
    changedAt: undefined,
    resourcesDigest: null,
    breaks: undefined,
    ...extra,
  });
  const catalog = (label: string, skills: SkillSummary[], problems: string[] = []): CatalogSummary => ({
    label,
    connection: { status: 'failed', reason: 'a reason with "\u0000hole\u0000" in it' },
    offline: { since: '2026-12-01T00:00:00.000Z', listingSavedAt: null },
    generation: 'listing',
    listingComplete: true,
    cache: { ttlMs: null, cacheScope: null, relistAfterMs: 60_000 },
    liveChannel: false,
    listingInProgress: null,
    skills,
    problems,
  });

  it('gives exactly the pretty JSON of the document it stands for, whatever the catalogs hold', () => {
    const cases: CatalogSummary[][] = [
      [],
      [catalog('empty', [])],
      [catalog('a', [skill('x', 'x'), skill('x', 'p/x', { declined: 'too big' }), skill('y', 'y')], ['one problem']), catalog('b', [skill('x', 'x')])],
      [catalog('big', Array.from({ length: 1_200 }, (_, i) => skill(`s${i}`, `s${i}`)))],
    ];
    for (const catalogs of cases) {
      for (const mount of [undefined, { pid: 1, startedAt: 't', cache: { usedBytes: 0, limitBytes: 1 }, recentErrors: ['e'] }]) {
        const text = renderSkillsJson(catalogs, mount);
        const reparsed = JSON.parse(text);
        const pretty = `${JSON.stringify(reparsed, null, 2).replace(/\u2028/g, '\\u2028')}\n`;
        expect(text).toBe(pretty);
        expect(reparsed.servers).toHaveLength(catalogs.length);
        expect([...skillsJsonParts(catalogs, mount)].join('').length).toBe(text.length - 1);
      }
    }
  });

  it('marks a place to pause at least every 500 skills', () => {
    const parts = [...skillsJsonParts([catalog('big', Array.from({ length: 2_000 }, (_, i) => skill(`s${i}`, `s${i}`)))])];
    let sincePause = 0;
    let longest = 0;
    for (const part of parts) {
      if (part === '') sincePause = 0;
      else longest = Math.max(longest, (sincePause += 1));
    }
    // 500 skills, plus the few pieces of outline around the first of them.
    expect(longest).toBeLessThanOrEqual(510);
  });
});
