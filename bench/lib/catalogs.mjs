// The trees the benchmark serves: synthetic catalogs from scripts/gen-skills.mjs and the
// real corpus, each with its file list (from the server's own listing) and a copy on local disk.
import { execFile } from 'node:child_process';
import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { GEN_SKILLS } from './paths.mjs';
import { connectStdio, listAllSkills, manifestFiles } from './raw-client.mjs';

/** Runs gen-skills.mjs into `dir`; `options` are its flags ({skills, files, group, sizes, big}). */
export async function generateCatalog(dir, options) {
  await mkdir(dir, { recursive: true });
  const flags = Object.entries(options).flatMap(([name, value]) => [`--${name}`, String(value)]);
  const startedMs = performance.now();
  await new Promise((resolve, reject) =>
    execFile(process.execPath, [GEN_SKILLS, dir, ...flags], { maxBuffer: 1 << 20 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`gen-skills failed: ${stderr}`)) : resolve(),
    ),
  );
  return performance.now() - startedMs;
}

/** Every file skills-serve lists for `dir` ({uri, path, sizeBytes}), asked through skills/list. */
export async function listedFiles(dir) {
  const client = await connectStdio(dir);
  try {
    return manifestFiles((await listAllSkills(client)).skills);
  } finally {
    await client.close();
  }
}

/**
 * A served tree ready for the benchmark: `dir` (what skills-serve serves), `diskDir` (the same
 * tree copied to local disk), `files` ({uri, path, sizeBytes}, from skills/list), `totalBytes`.
 */
export async function prepareCatalog({ name, dir, diskRoot }) {
  const files = await listedFiles(dir);
  if (files.length === 0) throw new Error(`catalog ${name} (${dir}) serves no files`);
  const diskDir = path.join(diskRoot, name);
  await cp(dir, diskDir, { recursive: true });
  return { name, dir, diskDir, files, totalBytes: files.reduce((sum, file) => sum + file.sizeBytes, 0) };
}
