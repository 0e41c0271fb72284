// The trees the benchmark serves: synthetic catalogs from scripts/gen-skills.mjs and the
// real corpus, each with its file list (from the server's own listing) and a copy on local disk.
import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, stat } from 'node:fs/promises';
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

/**
 * Copies into `dest` the top-level directories of `source` that hold at most `maxBytes` and
 * `maxFiles` files each (a smaller catalog of the same kind); resolves the names left out.
 */
export async function trimmedCopy(source, dest, { maxBytes, maxFiles }) {
  await mkdir(dest, { recursive: true });
  const left = [];
  for (const entry of await readdir(source, { withFileTypes: true })) {
    const from = path.join(source, entry.name);
    const { bytes, files } = entry.isDirectory() ? await treeSize(from) : { bytes: (await stat(from)).size, files: 1 };
    if (bytes > maxBytes || files > maxFiles) left.push(entry.name);
    else await cp(from, path.join(dest, entry.name), { recursive: true });
  }
  return left;
}

async function treeSize(dir) {
  let bytes = 0;
  let files = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    bytes += (await stat(path.join(entry.parentPath ?? entry.path, entry.name))).size;
    files += 1;
  }
  return { bytes, files };
}
