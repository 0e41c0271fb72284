// An offline start counts the skills it shows, not the entries it kept (issue 22 item 14): a
// kept listing of 4 entries of which 1 is shown (one repeated, one refused, one declined) says
// 1 skill in its log line and in the startup summary; an approvedOnly server's skills, which
// the full view does not show, are counted apart.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import type { DurableStore } from '../../src/catalog/durable-store.js';
import { keptListingDocument } from '../../src/catalog/kept-listing.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { startupSummary } from '../../src/cli/mount-command.js';
import { MemorySkillSource, sha256, skillMarkdown } from '../support/memory-skill-source.js';

const SAVED_AT = '2026-12-01T00:00:00.000Z';

function entry(path: string, name = path.split('/').pop()!, resources: 'dynamic' | undefined = undefined) {
  const uri = `skill://${path}/SKILL.md`;
  const text = skillMarkdown(name);
  return { uri, frontmatter: { name, description: `Does ${name} things` }, resources: resources ?? [{ uri, digest: sha256(text), size: text.length }] };
}

/** A disk cache holding one kept listing. */
function keptStore(entries: unknown[]): DurableStore {
  const document = JSON.parse(JSON.stringify(keptListingDocument('listing', entries as never)));
  return {
    get: async () => undefined,
    put: async () => true,
    saveListing: async () => true,
    loadListing: async () => ({ savedAt: SAVED_AT, document }),
  };
}

describe('an offline start', () => {
  it('counts the 1 skill it shows of the 4 entries it kept, in its log line and in the startup summary', async () => {
    // One shown; one repeated; one whose name is not its directory (refused); one dynamic, declined by --no-dynamic.
    const entries = [entry('good'), entry('good'), entry('misnamed', 'other'), entry('live', 'live', 'dynamic')];
    const down = new MemorySkillSource('lab');
    down.status = { status: 'failed', reason: 'cannot connect: no such command' };
    const log: string[] = [];
    const catalog = new ServerCatalog(down, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => log.push(line), cache: new ContentCache(1 << 20), hideDynamic: true, durable: keptStore(entries) });
    expect(await catalog.restoreKeptListing()).toBe(true);

    expect(await catalog.list('')).toEqual(['good']);
    expect(log).toContain(`[lab] not reachable: showing the listing kept on disk (saved ${SAVED_AT}): 1 skills; 3 of its 4 entries not shown (see problems)`);
    const summary = startupSummary([{ label: 'lab', connected: false, offline: catalog.offline() !== null, skills: catalog.health().skills }], new Set(), 0.5);
    expect(summary).toBe('0/1 servers connected; not connected: lab; offline, shown from the disk cache: lab; 1 skill; ready in 0.5 s');
  });

  it("counts an approvedOnly server's skills apart: the full view does not show its directory", () => {
    const servers = [
      { label: 'docs', connected: true, offline: false, skills: 1_200 },
      { label: 'vendor', connected: true, offline: false, skills: 3 },
    ];
    expect(startupSummary(servers, new Set(['vendor']), 2.04)).toBe(
      '2/2 servers connected: docs, vendor; 1,200 skills (and 3 skills served only in _approved/ once approved); ready in 2.0 s',
    );
    expect(startupSummary(servers, new Set(), 2.04)).toBe('2/2 servers connected: docs, vendor; 1,203 skills; ready in 2.0 s');
  });
});
