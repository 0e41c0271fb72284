// The filesystem core's routing: each path reaches the one view that serves it (the root, a
// server's full view, the generated documents, the approved view, the records) by its first
// segment(s), unknown names are NotFoundError in every operation, approved-only labels are refused
// in the full view and served in the approved one; and the rule that keeps reads whole while the
// kernel holds a size it was told.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalInputFor } from '../../src/approvals/approval-check.js';
import { ApprovalLedger } from '../../src/approvals/approval-ledger.js';
import { ApprovalStore } from '../../src/approvals/approval-store.js';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { IsADirectoryError, NotADirectoryError, NotFoundError, StaleVersionError } from '../../src/errors.js';
import { ApprovedView } from '../../src/fs/approved-view.js';
import { KernelHold, type ReportedVersion } from '../../src/fs/reported-versions.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';
import { TempDirs } from '../support/temp-dir.js';

const dirs = new TempDirs('node-providers-');
const ledgers: ApprovalLedger[] = [];
afterEach(async () => {
  for (const ledger of ledgers.splice(0)) await ledger.idle();
  await dirs.removeAll();
});

/** Two servers, docs and kept (kept served only in the approved view), each with the skill guide; with approvals unless told. */
async function fixture(options: { approvals?: boolean } = {}) {
  const clock = { ms: Date.parse('2026-12-01T00:00:00.000Z') };
  const catalogs: ServerCatalog[] = [];
  for (const label of ['docs', 'kept']) {
    const source = new MemorySkillSource(label);
    source.addSkill('guide', { 'SKILL.md': skillMarkdown('guide'), 'refs/tone.md': 'Be brief.\n' });
    const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => {}, cache: new ContentCache(1 << 20), hideDynamic: false, now: () => clock.ms });
    await catalog.refresh();
    catalogs.push(catalog);
  }
  const approvedOnly = new Set(['kept']);
  if (options.approvals === false) return { filesystem: new SkillsFilesystem(catalogs, { approvedOnly, now: () => clock.ms }), approve: undefined };
  const file = path.join(await dirs.make(), 'approvals.json');
  const ledger = await ApprovalLedger.open(file, () => {}, () => clock.ms);
  ledgers.push(ledger);
  const view = new ApprovedView(new Map(catalogs.map((catalog) => [catalog.label, catalog])), ledger);
  const store = await ApprovalStore.load(file, { now: () => new Date(clock.ms) });
  /** Approves the skill guide of `label` as held now, and lets the approvals file be read again. */
  const approve = async (label: string) => {
    const record = view.inspect(label, 'guide')!;
    await store.approve(approvalInputFor(label, { ...record, files: record.files as Exclude<typeof record.files, string> }, { allowedToolsApproved: false }));
    clock.ms += 1_000;
  };
  return { filesystem: new SkillsFilesystem(catalogs, { approvals: ledger, approvedOnly, now: () => clock.ms }), approve };
}

async function readWhole(filesystem: SkillsFilesystem, at: string): Promise<string> {
  const handle = await filesystem.open(at);
  try {
    return filesystem.read(handle, 0, 1 << 20).toString();
  } finally {
    filesystem.release(handle);
  }
}

describe('path resolution', () => {
  it("reaches each root name's view: what each node is, and how long the kernel may keep the answer", async () => {
    const { filesystem, approve } = await fixture();
    await approve!('docs');
    const shape = async (at: string) => {
      const attributes = await filesystem.getattr(at);
      return [attributes.kind, attributes.cacheSeconds];
    };
    expect(await shape('/')).toEqual(['directory', undefined]);
    expect(await shape('/docs')).toEqual(['directory', undefined]);
    expect(await shape('/docs/guide/SKILL.md')).toEqual(['file', undefined]);
    // Rendered from live state: asked again each time.
    expect(await shape('/skills.json')).toEqual(['file', 0]);
    expect(await shape('/status.json')).toEqual(['file', 0]);
    expect(await shape('/_approved/skills.json')).toEqual(['file', 0]);
    expect(await shape('/.inspect/docs/guide.json')).toEqual(['file', 0]);
    // Views of the approvals file: trusted for a second.
    expect(await shape('/_approved')).toEqual(['directory', 1]);
    expect(await shape('/_approved/docs/guide')).toEqual(['directory', 1]);
    expect(await shape('/_approved/docs/guide/SKILL.md')).toEqual(['file', 1]);
    expect(await shape('/.inspect')).toEqual(['directory', 1]);
    expect(await shape('/.inspect/docs')).toEqual(['directory', 1]);
    expect(await filesystem.readdir('/')).toEqual(['docs', 'skills.json', 'status.json', '_approved']);
    expect(await filesystem.readdir('/_approved')).toEqual(['docs', 'kept', 'skills.json']);
    expect(await filesystem.readdir('/.inspect')).toEqual(['docs', 'kept']);
    expect(JSON.parse(await readWhole(filesystem, '/_approved/skills.json')).view).toBe('approved');
    expect(JSON.parse(await readWhole(filesystem, '/status.json')).servers.map((server: { label: string }) => server.label)).toEqual(['docs', 'kept']);
  });

  it('resolves a path with extra leading and trailing slashes as without them', async () => {
    const { filesystem } = await fixture();
    expect(await filesystem.readdir('//docs/guide/')).toEqual(await filesystem.readdir('/docs/guide'));
    expect(await filesystem.readdir('/_approved//')).toEqual(await filesystem.readdir('/_approved'));
    expect((await filesystem.getattr('/skills.json/')).kind).toBe('file');
  });

  it('a first segment that names no server is NotFoundError in every operation; without approvals so are _approved and .inspect', async () => {
    const { filesystem } = await fixture({ approvals: false });
    expect(await filesystem.readdir('/')).toEqual(['docs', 'skills.json', 'status.json']);
    for (const at of ['/nolabel', '/nolabel/guide/SKILL.md', '/_approved', '/_approved/skills.json', '/.inspect', '/.inspect/docs']) {
      await expect(filesystem.getattr(at), at).rejects.toThrow(/no such server label/);
      await expect(filesystem.readdir(at), at).rejects.toBeInstanceOf(NotFoundError);
      await expect(filesystem.open(at), at).rejects.toBeInstanceOf(NotFoundError);
      await expect(filesystem.listxattr(at), at).rejects.toBeInstanceOf(NotFoundError);
    }
  });

  it('a label unknown to the approved view or the records is NotFoundError; so is anything below a record, or a record of no skill', async () => {
    const { filesystem } = await fixture();
    for (const at of ['/_approved/nolabel', '/_approved/nolabel/guide/SKILL.md', '/.inspect/nolabel', '/.inspect/nolabel/guide.json']) {
      await expect(filesystem.getattr(at), at).rejects.toThrow(/no such server label/);
      await expect(filesystem.readdir(at), at).rejects.toBeInstanceOf(NotFoundError);
      await expect(filesystem.listxattr(at), at).rejects.toBeInstanceOf(NotFoundError);
    }
    await expect(filesystem.getattr('/.inspect/docs/guide.json/more')).rejects.toThrow(/no such skill record/);
    await expect(filesystem.getattr('/.inspect/docs/nothing.json')).rejects.toThrow(/no skill record of that name/);
    await expect(filesystem.getattr('/_approved/docs/guide/SKILL.md')).rejects.toThrow(/not in the approved view/);
  });

  it('an approved-only label is refused in the full view in every operation, and served in _approved once approved', async () => {
    const { filesystem, approve } = await fixture();
    for (const at of ['/kept', '/kept/guide', '/kept/guide/SKILL.md']) {
      await expect(filesystem.getattr(at), at).rejects.toThrow(/the skills of kept are served only under _approved\/kept/);
      await expect(filesystem.readdir(at), at).rejects.toBeInstanceOf(NotFoundError);
      await expect(filesystem.open(at), at).rejects.toBeInstanceOf(NotFoundError);
      await expect(filesystem.listxattr(at), at).rejects.toBeInstanceOf(NotFoundError);
    }
    expect(await filesystem.readdir('/_approved/kept')).toEqual([]);
    await approve!('kept');
    expect(await filesystem.readdir('/_approved/kept')).toEqual(['guide']);
    expect(await readWhole(filesystem, '/_approved/kept/guide/SKILL.md')).toBe(skillMarkdown('guide'));
    const xattrs = await filesystem.listxattr('/_approved/kept/guide/SKILL.md');
    expect(xattrs).toEqual(['user.mcp.server', 'user.mcp.uri', 'user.mcp.digest', 'user.mcp.verified']);
    expect((await filesystem.getxattr('/_approved/kept/guide/SKILL.md', 'user.mcp.server')).toString()).toBe('kept');
    // Still refused in the full view.
    await expect(filesystem.getattr('/kept/guide/SKILL.md')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('in every view, a directory cannot be opened and a file cannot be listed', async () => {
    const { filesystem, approve } = await fixture();
    await approve!('docs');
    for (const at of ['/', '/docs', '/docs/guide', '/_approved', '/_approved/docs', '/_approved/docs/guide', '/.inspect', '/.inspect/docs']) {
      await expect(filesystem.open(at), at).rejects.toBeInstanceOf(IsADirectoryError);
    }
    for (const at of ['/docs/guide/SKILL.md', '/skills.json', '/status.json', '/_approved/skills.json', '/_approved/docs/guide/SKILL.md', '/.inspect/docs/guide.json']) {
      await expect(filesystem.readdir(at), at).rejects.toBeInstanceOf(NotADirectoryError);
    }
  });
});

describe('the kernel hold', () => {
  it('refuses only the bytes of another version longer than the size the kernel still holds, and logs why', () => {
    let nowMs = 1_000_000;
    const logs: string[] = [];
    const versions = new Map<string, ReportedVersion>([['/f', { digest: 'sha256:a', sizeBytes: 10, reportedAtMs: nowMs }]]);
    const hold = new KernelHold((at) => versions.get(at), { metadataTtlMs: 30_000, now: () => nowMs, log: (line) => logs.push(line) });
    const reported = hold.reported('/f');
    const bytes = (digest: string, length: number) => ({ digest, bytes: Buffer.alloc(length) });
    // The reported version itself, another that fits, and a path never reported.
    expect(() => hold.refuseClipped('/f', reported, bytes('sha256:a', 20))).not.toThrow();
    expect(() => hold.refuseClipped('/f', reported, bytes('sha256:b', 10))).not.toThrow();
    expect(() => hold.refuseClipped('/g', hold.reported('/g'), bytes('sha256:b', 20))).not.toThrow();
    nowMs += 10_000;
    expect(() => hold.refuseClipped('/f', reported, bytes('sha256:b', 11))).toThrow(StaleVersionError);
    expect(logs).toEqual(["/f: changed on the server (now 11 bytes) after the kernel was told 10; served whole after the kernel's attribute cache expires (within 20 s)"]);
    // Past the attribute timeout the kernel asks again before it reads.
    nowMs += 20_000;
    expect(hold.heldSize(reported)).toBeUndefined();
    expect(() => hold.refuseClipped('/f', reported, bytes('sha256:b', 11))).not.toThrow();
  });
});
