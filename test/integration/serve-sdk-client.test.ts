// The SDK v2's own SkillsClient as a host of `skills-mount serve` in front of skills-serve: over
// stdio and Streamable HTTP, 2025 and 2026-07-28, with --all and in the default (approved) view
// with every skill approved by the CLI, it lists every upstream skill under the server's label and
// reads every listed file, verified by the client itself (size, digest, frontmatter) and equal to
// the upstream file on disk. Nothing of ours on the client side. Needs the build.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectHttp, CORPUS, EXAMPLES, type ClientEra } from '../support/server-harness.js';
import { connectServeStdio, gatewayForDescribe, SERVED_VIEWS } from '../support/serve-gateway.js';
import { listAndVerify } from '../support/skills-client-check.js';
import { TempDirs } from '../support/temp-dir.js';

const ERAS: ClientEra[] = ['legacy', 'modern'];
const targets = [
  // pdf-tools's manifest lists its nested skill forms's files too: 12 files on disk, 14 reads.
  { label: 'examples/skills', dir: EXAMPLES, skills: 5, files: 14 },
  // skills-serve refuses claude-api (1,068-character description): 11 of 12.
  ...(CORPUS ? [{ label: 'SKILLS_MOUNT_CORPUS', dir: CORPUS, skills: 11, files: undefined }] : []),
];
const temps = new TempDirs('skills-mount-serve-sdk-');
afterAll(() => temps.removeAll());

describe.each(targets)('SkillsClient against skills-mount serve in front of skills-serve on $label', ({ label, dir, skills, files }) => {
  // skill://docs/P is upstream skill://P of server docs: the file P under the served folder.
  const fileOf = (uri: string): string => {
    expect(uri.startsWith('skill://docs/'), uri).toBe(true);
    return join(dir, uri.slice('skill://docs/'.length));
  };
  const expectCounts = (counts: { skills: number; files: number }, how: string): void => {
    console.log(`SkillsClient via serve, ${label}, ${how}: ${counts.skills} skills, ${counts.files} files verified`);
    expect(counts.skills).toBe(skills);
    if (files !== undefined) expect(counts.files).toBe(files);
    else expect(counts.files).toBeGreaterThan(counts.skills);
  };

  describe.each(SERVED_VIEWS)('$view', ({ view, args, approve }) => {
    const { world, served } = gatewayForDescribe(temps, dir, { args, approve });

    it.each(ERAS)('over stdio (%s): lists every skill and verifies every listed file', async (era) => {
      const connected = await connectServeStdio(world(), args, era);
      try {
        expect(connected.client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
        expectCounts(await listAndVerify(connected.client, fileOf), `${view}, stdio ${era}`);
      } finally {
        await connected.close();
      }
    });

    it.each(ERAS)('over Streamable HTTP (%s): lists every skill and verifies every listed file', async (era) => {
      const client = await connectHttp(served().url, era);
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
        expectCounts(await listAndVerify(client, fileOf), `${view}, http ${era}`);
      } finally {
        await client.close();
      }
    });
  });
});
