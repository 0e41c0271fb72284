// `skills-mount doctor` on sign-in failures: a server that failed fast is not "not reached within
// N ms"; an authorization server out of reach is not blamed on the MCP server; a stored sign-in
// the server refuses is not listed as "signed in" next to the server's "needs login".
import { expect, it } from 'vitest';
import type { MountConfig } from '../../src/config/config.js';
import { runDoctor, type DoctorOptions, type DoctorProbes } from '../../src/cli/doctor-command.js';
import { DOCS, line, machine as healthyMachine } from '../support/doctor-machine.js';

const OPTIONS: DoctorOptions = { configPath: undefined, serverFlags: [], only: [], json: false, serverDeadlineMs: 5_000 };
/** Only docs (HTTP) configured: the sign-in lines are about it alone. */
function machine(changes: Partial<DoctorProbes>): DoctorProbes {
  return healthyMachine({ loadConfig: async (): Promise<MountConfig> => ({ origin: 'config.json', servers: [DOCS], notes: [] }), ...changes });
}

it('a server that failed after 0.5 s says why and when, not "not reached within 5000 ms"', async () => {
  const { text } = await runDoctor(OPTIONS, machine({ reach: async () => ({ reached: false, reason: 'cannot connect: HTTP 500', timedOut: false, elapsedMs: 512 }) }));
  expect(line(text, 'server docs')).toMatch(/^FAIL  server docs +http https:\/\/docs\.example\/mcp: cannot connect: HTTP 500 \(after 0\.5 s\)$/);
  expect(text).not.toContain('not reached within');
});

it('a server that said nothing before the deadline is "not reached within" it', async () => {
  const { text } = await runDoctor(OPTIONS, machine({ reach: async () => ({ reached: false, reason: 'no answer', timedOut: true }) }));
  expect(line(text, 'server docs')).toContain('not reached within 5000 ms: no answer');
});

it('an authorization server out of reach: the MCP server answered, the authorization server is named', async () => {
  const reason = 'cannot connect: cannot reach the authorization server at http://127.0.0.1:9/token (ECONNREFUSED): check that it is up';
  const { text } = await runDoctor(OPTIONS, machine({ reach: async () => ({ reached: false, reason, timedOut: false, elapsedMs: 80 }) }));
  expect(line(text, 'server docs')).toMatch(/http https:\/\/docs\.example\/mcp: the server answered, but signing in to it cannot go on: cannot reach the authorization server at http:\/\/127\.0\.0\.1:9\/token \(ECONNREFUSED\)/);
});

it('a stored sign-in the server refuses is not "signed in"', async () => {
  const reason = 'needs login: the server refused the token http://as.example issued for it (HTTP 401 invalid_token: "the token is for another resource"); run: skills-mount login docs';
  const { text, exitCode } = await runDoctor(OPTIONS, machine({ reach: async () => ({ reached: false, reason, timedOut: false, elapsedMs: 300, signInRefused: true }) }));
  expect(exitCode).toBe(1);
  expect(line(text, 'server docs')).toContain('the token is for another resource');
  expect(line(text, 'sign-in')).toMatch(/^warn  sign-in +stored but refused by the server: docs/);
  expect(line(text, 'sign-in')).not.toContain('signed in: docs');
});
