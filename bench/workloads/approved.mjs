// Reads through the approved view (MOUNTPOINT/_approved/<label>/) against the same files in the
// full view of the same mount, one mount per FUSE backend: every skill is approved (from its
// .inspect record, as `skills-mount approve` does), both views are read once to warm them, then
// each run reads every file through both, in alternating order. What the ratio prices is the
// view's own work per open: the approvals-file check, the tree lookup and the approved-digest check.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { approvalInputFor } from '../../dist/approvals/approval-check.js';
import { ApprovalStore } from '../../dist/approvals/approval-store.js';
import { differingFiles, readFiles } from '../lib/readers.mjs';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { timed } from '../lib/stats.mjs';

/**
 * Resolves per catalog and backend: samples (ms) through the approved view and through the full
 * view, and how many skills were approved.
 */
export async function measureApproved({ workDir, catalogs, runs, backends, log }) {
  const results = {};
  for (const catalog of catalogs) {
    results[catalog.name] = {};
    for (const backend of backends) results[catalog.name][backend] = await measureOn(catalog, backend);
  }
  return results;

  async function measureOn(catalog, backend) {
    const configHome = path.join(workDir, `approved-config-${catalog.name}-${backend}`);
    await mkdir(configHome, { recursive: true });
    const env = { ...process.env, XDG_CONFIG_HOME: configHome };
    const mount = await startMount({ workDir, name: `approved-${catalog.name}`, backend, servers: { [catalog.name]: serveEntry(catalog.dir) }, env });
    try {
      const skills = await approveEverySkill(mount.mountpoint, catalog.name, path.join(configHome, 'skills-mount', 'approvals.json'));
      const full = path.join(mount.mountpoint, catalog.name);
      const approved = path.join(mount.mountpoint, '_approved', catalog.name);
      // Only files of the approved sets are in the view: compare on those.
      const files = catalog.files.filter((file) => !file.path.startsWith('.'));
      await waitForView(approved, files);
      const differing = await differingFiles(approved, catalog.diskDir, files.map((file) => file.path));
      if (differing.length > 0) throw new Error(`the approved view (${backend}) serves other bytes than disk for ${differing.length} files, e.g. ${differing[0]}`);
      await readFiles(full, files, 1);
      const samples = { approved: [], full: [] };
      for (let run = 0; run < runs; run++) {
        const order = run % 2 === 0 ? ['approved', 'full'] : ['full', 'approved'];
        for (const view of order) samples[view].push((await timed(() => readFiles(view === 'approved' ? approved : full, files, 1))).ms);
        log(`approved view: ${catalog.name} (${backend}) run ${run + 1}/${runs} done`);
      }
      return { samples, skills, files: files.length };
    } finally {
      await mount.stop();
    }
  }
}

/** Approves every skill the mount holds for `label`, as shown in its record; resolves the count. */
async function approveEverySkill(mountpoint, label, approvalsFile) {
  const store = await ApprovalStore.load(approvalsFile);
  const recordsDir = path.join(mountpoint, '.inspect', label);
  let count = 0;
  for (const name of await readdir(recordsDir)) {
    const record = JSON.parse(await readFile(path.join(recordsDir, name), 'utf8'));
    if (record.cannotApprove !== null) continue;
    await store.approve(approvalInputFor(label, record, { allowedToolsApproved: false }));
    count += 1;
  }
  return count;
}

/**
 * The daemon re-reads the approvals file within 100 ms: wait until the first file is there. Not
 * looked up sooner: the kernel keeps a "no such file" for a while (--metadata-ttl bounds it).
 */
async function waitForView(root, files) {
  const deadline = Date.now() + 10_000;
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (;;) {
    try {
      await readFile(path.join(root, files[0].path));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
