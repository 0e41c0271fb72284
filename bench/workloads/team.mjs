// The team lockfile's commands on N skills, no mount anywhere (each command starts the stdio server
// itself), each against what a person does today with the same skills: `link claude-code --project P`
// of a skills-lock.json locking all N against `link claude-code` of the same N as personal approvals,
// cold (new HOME, new store, new project) and again unchanged; `outdated --project P` (all current)
// against that unchanged `link`; and `lock` of the N paths in one command against `approve` of them.
// The lockfile and the approvals are built from skills/list (bench/lib/locked-catalog.mjs); `lock`'s
// own file must be that same text. Requests are counted at the server (its --verbose log, a file).
import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { approvedAndLocked } from '../lib/locked-catalog.mjs';
import { loggedServeEntry } from '../lib/mount-child.mjs';
import { SKILLS_MOUNT } from '../lib/paths.mjs';
import { requestWindow } from '../lib/request-log.mjs';
import { timed } from '../lib/stats.mjs';

/** A run of the rows at 1,000 skills takes 30-50 s here (and `lock` with `approve` about 100 s more): three are enough for medians. */
export const TEAM_MAX_RUNS = 3;
const LABEL = 'bench';
const LOCKFILE = 'skills-lock.json';
/** Where `link claude-code` puts a user's entries, and a project's. */
const CLAUDE_SKILLS = path.join('.claude', 'skills');

/**
 * Samples (ms) per command and its baseline, the requests each made in the last run (by method),
 * and what was locked. `lockRuns`: in how many of the runs (the first ones) `lock` and `approve` are timed.
 */
export async function measureTeam({ workDir, catalog, runs, lockRuns = 1, log }) {
  const base = path.join(workDir, 'team');
  await mkdir(base, { recursive: true });
  const serverLog = path.join(base, 'server.log');
  const configFile = path.join(base, 'servers.json');
  // One server entry for every command and both sides: the lock names it as configured.
  const server = loggedServeEntry(catalog.dir, serverLog);
  await writeFile(configFile, `${JSON.stringify({ mcpServers: { [LABEL]: server } }, null, 2)}\n`);
  const { approvals, lockText, paths } = await approvedAndLocked(catalog.dir, { label: LABEL, server });
  const skills = approvals.length;
  const samples = { lock: [], approve: [], teamCold: [], linkCold: [], teamUnchanged: [], linkUnchanged: [], outdated: [], linkAgain: [] };
  const requests = {};
  const command = async (key, args, env) => {
    const window = await requestWindow(serverLog);
    const { ms, result } = await timed(() => skillsMount([...args, '--config', configFile], env));
    samples[key].push(ms);
    requests[key] = (await window.counts()).byMethod;
    return result;
  };
  const inTurn = async (run, sides) => {
    for (const side of run % 2 === 0 ? sides : [...sides].reverse()) await side();
  };

  for (let run = 0; run < runs; run++) {
    const dirs = { teamHome: path.join(base, `team-home-${run}`), linkHome: path.join(base, `link-home-${run}`), project: path.join(base, `project-${run}`) };
    const teamEnv = homeEnv(dirs.teamHome);
    const linkEnv = homeEnv(dirs.linkHome);
    await mkdir(path.join(dirs.teamHome, '.config', 'skills-mount'), { recursive: true, mode: 0o700 });
    await mkdir(path.join(dirs.linkHome, '.config', 'skills-mount'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(dirs.linkHome, '.config', 'skills-mount', 'approvals.json'), `${JSON.stringify({ version: 1, approvals }, null, 2)}\n`, { mode: 0o600 });
    await mkdir(dirs.project, { recursive: true });
    await writeFile(path.join(dirs.project, LOCKFILE), lockText, { mode: 0o644 });

    if (run < lockRuns) {
      // Both from nothing: a project without a lockfile, a HOME without approvals.
      const lockProject = path.join(base, `lock-project-${run}`);
      const approveHome = path.join(base, `approve-home-${run}`);
      await mkdir(lockProject, { recursive: true });
      await mkdir(path.join(approveHome, '.config', 'skills-mount'), { recursive: true, mode: 0o700 });
      Object.assign(dirs, { lockProject, approveHome });
      await inTurn(run, [
        () => command('lock', ['lock', ...paths, '--project', lockProject, '--yes'], teamEnv),
        () => command('approve', ['approve', ...paths, '--yes'], homeEnv(approveHome)),
      ]);
      if ((await readFile(path.join(lockProject, LOCKFILE), 'utf8')) !== lockText) throw new Error(`team bench: lock wrote another ${LOCKFILE} than the one built from skills/list (${lockProject})`);
      const approved = JSON.parse(await readFile(path.join(approveHome, '.config', 'skills-mount', 'approvals.json'), 'utf8')).approvals;
      if (approved.length !== skills) throw new Error(`team bench: approve recorded ${approved.length} approvals of ${skills}`);
    }

    const teamLink = ['link', 'claude-code', '--project', dirs.project];
    const personalLink = ['link', 'claude-code'];
    await inTurn(run, [() => command('teamCold', teamLink, teamEnv), () => command('linkCold', personalLink, linkEnv)]);
    await expectEntries(path.join(dirs.project, CLAUDE_SKILLS), skills);
    await expectEntries(path.join(dirs.linkHome, CLAUDE_SKILLS), skills);
    await inTurn(run, [() => command('teamUnchanged', teamLink, teamEnv), () => command('linkUnchanged', personalLink, linkEnv)]);
    let report = '';
    await inTurn(run, [
      async () => {
        report = await command('outdated', ['outdated', '--project', dirs.project], teamEnv);
      },
      () => command('linkAgain', personalLink, linkEnv),
    ]);
    const summary = report.trimEnd().split('\n').at(-1);
    if (summary !== `${skills} locked skills: ${skills} current, 0 changed`) throw new Error(`team bench: outdated said "${summary}"`);

    for (const dir of Object.values(dirs)) {
      await makeWritable(dir);
      await rm(dir, { recursive: true, force: true });
    }
    const lockPart = run < lockRuns ? `lock ${ms(samples.lock)} (approve ${ms(samples.approve)}), ` : '';
    log(`team: run ${run + 1}: ${lockPart}link --project cold ${ms(samples.teamCold)} (link ${ms(samples.linkCold)}), unchanged ${ms(samples.teamUnchanged)} (link ${ms(samples.linkUnchanged)}), outdated ${ms(samples.outdated)} (link ${ms(samples.linkAgain)})`);
  }
  return { samples, requests, skills, files: catalog.files.length, totalBytes: catalog.totalBytes, lockBytes: Buffer.byteLength(lockText) };
}

function ms(samples) {
  return `${samples.at(-1).toFixed(0)} ms`;
}

function homeEnv(home) {
  return { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_CACHE_HOME: path.join(home, '.cache') };
}

async function expectEntries(root, count) {
  const entries = (await readdir(root)).length;
  if (entries !== count) throw new Error(`team bench: ${entries} entries in ${root}, ${count} expected`);
}

/** The link store's objects are read-only: made writable again so the run's folders can go. */
async function makeWritable(dir) {
  await chmod(dir, 0o700).catch(() => undefined);
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isDirectory()) await chmod(path.join(entry.parentPath ?? entry.path, entry.name), 0o700);
  }
}

/** `skills-mount ARGS` in `env`; resolves its stdout, rejects with its stderr on a non-zero exit. */
function skillsMount(args, env) {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [SKILLS_MOUNT, ...args], { env, maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`skills-mount ${args[0]} failed (${error.code ?? error.signal}): ${stderr.split('\n').slice(-20).join('\n')}`)) : resolve(stdout),
    ),
  );
}
