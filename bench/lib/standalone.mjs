// The folders of a workload run on its own (bench/workloads/*-only.mjs): a work dir under `parent`
// (tmpfs by default) and a local-disk dir under the system temp, removed, with every mount the
// workload started, at its end or on SIGINT/SIGTERM.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stopAllMounts } from './mount-child.mjs';

/** Makes `skills-bench-NAME-*` dirs; resolves {workDir, diskRoot, cleanUp}. */
export async function standaloneDirs(name, parent = '/dev/shm') {
  await mkdir(parent, { recursive: true });
  const workDir = await mkdtemp(path.join(parent, `skills-bench-${name}-`));
  const diskRoot = await mkdtemp(path.join(os.tmpdir(), `skills-bench-${name}-disk-`));
  const cleanUp = async () => {
    await stopAllMounts();
    await rm(workDir, { recursive: true, force: true });
    await rm(diskRoot, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanUp().finally(() => process.exit(130)));
  return { workDir, diskRoot, cleanUp };
}
