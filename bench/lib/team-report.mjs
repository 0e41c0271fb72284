// The team lockfile's rows (workloads/team.mjs): each command's median against its baseline's, the
// ratio taken within the same runs, the requests the server saw in the last run (in the row's detail,
// and by method in its `requests`).
import { median } from './stats.mjs';
import { formatValue, row } from './table.mjs';

const MB = 1e6;

/** Rows team/lock (when timed), team/link-cold, team/link-unchanged, team/outdated; all report only. */
export function buildTeamRows(team) {
  const { samples, requests, skills, files, totalBytes } = team;
  const n = skills.toLocaleString('en');
  const label = `${n} skills, ${files.toLocaleString('en')} files, ${(totalBytes / MB).toFixed(1)} MB`;
  const perSkill = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / skills, 'ms')}/skill)`;
  const compared = ({ id, workload, measured, baseline, key, baselineKey }) => {
    const m = median(measured);
    const b = median(baseline);
    const counted = row({ id, workload, unit: 'ms', measured: m, baseline: b, ratio: m / b, target: 'report', met: null, measuredText: perSkill(m), baselineText: formatValue(b, 'ms'),
      detail: `requests: ${methods(requests[key])}; baseline's: ${methods(requests[baselineKey])}`, samples: { measured, baseline } });
    // By method, for results.json: an unchanged link or outdated must read no content.
    return { ...counted, requests: { measured: requests[key] ?? {}, baseline: requests[baselineKey] ?? {} } };
  };
  const rows = [];
  if (samples.lock.length > 0) {
    rows.push(compared({ id: 'team/lock', key: 'lock', baselineKey: 'approve', measured: samples.lock, baseline: samples.approve,
      workload: `\`skills-mount lock\` of ${n} LABEL/SKILLDIR in one command (\`--yes\`) into a project without a lockfile, the stdio server started by it (${label}); vs \`approve\` of the same ${n} (\`--yes\`) into an empty approvals.json` }));
  }
  rows.push(
    compared({ id: 'team/link-cold', key: 'teamCold', baselineKey: 'linkCold', measured: samples.teamCold, baseline: samples.linkCold,
      workload: `\`skills-mount link claude-code --project P\`, P's skills-lock.json locking ${n} skills, new HOME, store and project root, no mount (${label}); vs \`link claude-code\` of the same ${n} as personal approvals, cold` }),
    compared({ id: 'team/link-unchanged', key: 'teamUnchanged', baselineKey: 'linkUnchanged', measured: samples.teamUnchanged, baseline: samples.linkUnchanged,
      workload: 'the same `link --project` again, nothing changed; vs the personal `link` again, nothing changed' }),
    compared({ id: 'team/outdated', key: 'outdated', baselineKey: 'linkAgain', measured: samples.outdated, baseline: samples.linkAgain,
      workload: `\`skills-mount outdated --project P\`, all ${n} locked skills current; vs \`link claude-code\` (personal, unchanged), today's command that also asks the server about every approved skill` }),
  );
  return rows;
}

function methods(byMethod) {
  if (byMethod === undefined) return 'not counted';
  const entries = Object.entries(byMethod).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!entries.some(([method]) => method === 'resources/read')) entries.push(['resources/read', 0]);
  return entries.map(([method, count]) => `${method} ${count}`).join(', ');
}
