// Where the benchmark finds the built CLIs and its tools, relative to the repo.
// Every skills-serve here runs --lenient: a real corpus may hold published skills over a length limit, and the
// benchmark measures the same files whatever the serving policy.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SKILLS_MOUNT = path.join(REPO, 'dist', 'cli', 'skills-mount.js');
export const SKILLS_SERVE = path.join(REPO, 'dist', 'cli', 'skills-serve.js');
export const GEN_SKILLS = path.join(REPO, 'scripts', 'gen-skills.mjs');
export const FUSE_CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');
export const RESULTS_FILE = path.join(REPO, 'bench', 'results.json');
