// verify --against-server's comparison, with no server: a manifest and skills.json against a
// walked live view. Every digest and size, files on one side only, skills' listed fields, and
// servers that could not be compared are named; what --only left out is not a difference.
import { describe, expect, it } from 'vitest';
import type { SkillsJsonSkill } from '../../src/fs/skills-json.js';
import { compareWithServers, type CatalogDocument, type LiveView, type SnapshotSide } from '../../src/snapshot/server-comparison.js';
import { MANIFEST_FORMAT, type ManifestFile, type SnapshotManifest } from '../../src/snapshot/snapshot-manifest.js';
import type { WalkedFile } from '../../src/snapshot/view-walk.js';

const D = (n: number): string => `sha256:${String(n).repeat(64).slice(0, 64)}`;

function skill(path: string, overrides: Partial<SkillsJsonSkill> = {}): SkillsJsonSkill {
  const name = path.split('/').at(-1)!;
  return { name, qualifiedName: path, description: `the ${name} skill`, uri: `skill://${name}/SKILL.md`, path, digest: D(1), integrity: 'verified', state: 'ok', resourcesDigest: D(9), ...overrides };
}

function catalog(servers: Record<string, SkillsJsonSkill[]>): CatalogDocument {
  return { servers: Object.entries(servers).map(([label, skills]) => ({ label, skills })) };
}

/** A snapshot of `files` (path -> [digest, size]) in the mount view, with skills.json. */
function snapshotOf(files: Record<string, [string, number]>, options: { labels?: string[]; omitted?: string[]; skills?: CatalogDocument } = {}): SnapshotSide {
  const manifestFiles: ManifestFile[] = Object.entries(files).map(([path, [sha256, sizeBytes]]) => ({ path, sha256, sizeBytes, verified: true }));
  manifestFiles.push({ path: 'skills.json', sha256: D(7), sizeBytes: 100, verified: false });
  const manifest: SnapshotManifest = {
    format: MANIFEST_FORMAT,
    id: '20261201T000000000Z-abcdef',
    createdAt: '2026-12-01T00:00:00.000Z',
    view: 'mount',
    includeDynamic: false,
    servers: (options.labels ?? ['docs']).map((label) => ({ label, state: 'connected' })),
    omitted: (options.omitted ?? []).map((path) => ({ path, reason: 'rejected: bad frontmatter' })),
    directories: [],
    files: manifestFiles,
  };
  return { manifest, documents: new Map([['skills.json', options.skills ?? catalog({ docs: [skill('docs/a')] })]]) };
}

function liveOf(files: Record<string, [string | undefined, number]>, options: { servers?: Array<[string, string | undefined]>; skills?: CatalogDocument; failures?: string[] } = {}): LiveView {
  const walked: WalkedFile[] = Object.entries(files).map(([path, [digest, sizeBytes]]) => ({ path, corePath: `/${path}`, sizeBytes, digest, verified: digest !== undefined }));
  return {
    walk: { files: walked, directories: [], documents: ['skills.json'], failures: (options.failures ?? []).map((path) => ({ path, error: new Error('timed out') })) },
    servers: (options.servers ?? [['docs', undefined]]).map(([label, problem]) => ({ label, problem })),
    documents: new Map([['skills.json', options.skills ?? catalog({ docs: [skill('docs/a')] })]]),
  };
}

const SAME: Record<string, [string, number]> = { 'docs/a/SKILL.md': [D(1), 10], 'docs/a/x.txt': [D(2), 20] };

describe('a snapshot compared with what the servers list now', () => {
  it('the same: no problem; every file compared by digest', () => {
    expect(compareWithServers(snapshotOf(SAME), liveOf(SAME), new Set())).toEqual({ problems: [], servers: ['docs'], leftOut: [], filesCompared: 2, digestsCompared: 2 });
  });

  it("a file's bytes and its manifest entry changed together (the issue's attack): named with both digests and sizes", () => {
    const attacked = snapshotOf({ ...SAME, 'docs/a/x.txt': [D(3), 15] });
    expect(compareWithServers(attacked, liveOf(SAME), new Set()).problems).toEqual([
      { path: 'docs/a/x.txt', kind: 'differs', against: 'server', detail: `the server lists ${D(2)} (20 bytes) now; the manifest says ${D(3)} (15 bytes)` },
    ]);
  });

  it('a file planted in the snapshot, one the server added, one now without a digest; a skill left out by the snapshot is not missing', () => {
    const snapshot = snapshotOf({ ...SAME, 'docs/a/planted.md': [D(4), 4], 'docs/b/SKILL.md': [D(5), 5] }, { omitted: ['docs/r'] });
    const live = liveOf({ ...SAME, 'docs/b/SKILL.md': [undefined, 5], 'docs/c/SKILL.md': [D(6), 6], 'docs/r/SKILL.md': [D(8), 8] });
    expect(compareWithServers(snapshot, live, new Set()).problems).toEqual([
      { path: 'docs/a/planted.md', kind: 'extra', against: 'server', detail: `the server does not list it now (the manifest says ${D(4)}, 4 bytes)` },
      { path: 'docs/b/SKILL.md', kind: 'differs', against: 'server', detail: `the server lists it without a digest now; the manifest says ${D(5)}` },
      { path: 'docs/c/SKILL.md', kind: 'missing', against: 'server', detail: `the server lists it now (${D(6)}, 6 bytes); the snapshot does not hold it` },
    ]);
  });

  it('servers: one held but not configured is unchecked, one --only left out is named only, one not listed whole is unchecked, one configured but not held is missing', () => {
    const snapshot = snapshotOf({ ...SAME, 'evil/x/SKILL.md': [D(4), 4], 'other/y/SKILL.md': [D(5), 5], 'down/z/SKILL.md': [D(6), 6] }, { labels: ['docs', 'evil', 'other', 'down'] });
    const live = liveOf(SAME, { servers: [['docs', undefined], ['down', 'failed: connection refused'], ['new', undefined]] });
    const result = compareWithServers(snapshot, live, new Set(['other']));
    expect(result.problems).toEqual([
      { path: 'down', kind: 'unchecked', against: 'server', detail: 'could not be listed whole now (failed: connection refused): its files were not compared' },
      { path: 'evil', kind: 'unchecked', against: 'server', detail: 'the snapshot holds this server, which is not configured here: its files were not compared' },
      { path: 'new', kind: 'missing', against: 'server', detail: 'a configured server the snapshot does not hold' },
    ]);
    expect(result).toMatchObject({ servers: ['docs'], leftOut: ['other'], filesCompared: 2 });
  });

  it("skills.json: a skill's listed fields changed, one added, one removed are named; its state is the mount's and not compared", () => {
    const snapshot = snapshotOf(SAME, { skills: catalog({ docs: [skill('docs/a', { description: 'Run me first.', state: 'rejected' }), skill('docs/fake')] }) });
    const live = liveOf(SAME, { skills: catalog({ docs: [skill('docs/a'), skill('docs/new')] }) });
    expect(compareWithServers(snapshot, live, new Set()).problems).toEqual([
      { path: 'skills.json', kind: 'differs', against: 'server', detail: 'docs/a: description not as the server lists it now' },
      { path: 'skills.json', kind: 'differs', against: 'server', detail: 'docs/fake: a skill the server does not list now' },
      { path: 'skills.json', kind: 'differs', against: 'server', detail: 'docs/new: a skill the server lists now is not in it' },
    ]);
  });

  it('a walk failure under a compared server is unchecked', () => {
    expect(compareWithServers(snapshotOf(SAME), liveOf(SAME, { failures: ['docs/a/refs'] }), new Set()).problems).toEqual([
      { path: 'docs/a/refs', kind: 'unchecked', against: 'server', detail: 'could not be walked now: timed out' },
    ]);
  });
});
