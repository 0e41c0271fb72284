// How a server that needs a sign-in shows in `skills-mount status`: its own state (not
// "offline"), its kept listing's note, and the command to run.
import { describe, expect, it } from 'vitest';
import { renderStatusText, type StatusReport } from '../../src/cli/status.js';

describe('status text of a server that needs a sign-in', () => {
  it('shows "needs login" with the kept listing and the command to run', () => {
    const report: StatusReport = {
      mounts: [
        {
          mountpoint: '/home/u/skills',
          state: 'ok',
          servers: [
            {
              label: 'team',
              state: 'needs-login',
              reason: 'needs login: the authorization server refused to refresh the sign-in (invalid_grant); run: skills-mount login team',
              offline: { since: '2025-01-01T11:00:00.000Z', listingSavedAt: '2025-01-01T10:00:00.000Z' },
              generation: 'listing',
              listingComplete: true,
              skills: 12,
              declined: 0,
              rejected: 0,
              changed: 0,
              problems: 0,
            },
          ],
        },
      ],
    };
    const text = renderStatusText(report, Date.parse('2025-01-01T12:00:00Z'));
    expect(text).toMatch(/^ {2}team +needs login +listing +12 +since 2025-01-01T11:00:00.000Z; listing kept on disk .*; needs login: .*; run: skills-mount login team$/m);
    expect(text).toContain('1 server (0 connected), 12 skills');
  });
});
