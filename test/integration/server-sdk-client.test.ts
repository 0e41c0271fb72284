// The SDK v2's own SkillsClient as a third-party host of skills-serve: over stdio and HTTP,
// 2025 and 2026-07-28, it lists every skill and reads and verifies (size, digest,
// frontmatter) every listed file. Nothing of ours on the client side.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import { connectHttp, connectStdio, CORPUS, EXAMPLES, type ClientEra } from '../support/server-harness.js';
import { listAndVerify } from '../support/skills-client-check.js';

const ERAS: ClientEra[] = ['legacy', 'modern'];
const targets = [
  { label: 'examples/skills', dir: EXAMPLES, skills: 5 },
  // Default, conformant serving refuses claude-api (1,068-character description): 11 of 12.
  ...(CORPUS ? [{ label: 'SKILLS_MOUNT_CORPUS', dir: CORPUS, skills: 11 }] : []),
];

describe.each(targets)('SkillsClient against skills-serve on $label', ({ label, dir, skills }) => {
  const fileOf = (uri: string): string => join(dir, uri.slice('skill://'.length));
  describe.each(ERAS)('over stdio (%s)', (era) => {
    it('lists every skill and verifies every listed file', async () => {
      const connected = await connectStdio([dir], era);
      try {
        const counts = await listAndVerify(connected.client, fileOf);
        console.log(`SkillsClient ${label} stdio ${era}: ${counts.skills} skills, ${counts.files} files verified`);
        expect(counts.skills).toBe(skills);
      } finally {
        await connected.close();
      }
    });
  });

  describe('over Streamable HTTP', () => {
    let served: ListeningServer | undefined;
    beforeAll(async () => {
      served = await startHttpServe([dir]);
    });
    afterAll(async () => {
      await served?.stop();
    });

    it.each(ERAS)('lists every skill and verifies every listed file (%s)', async (era) => {
      const client = await connectHttp(served!.url, era);
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
        const counts = await listAndVerify(client, fileOf);
        console.log(`SkillsClient ${label} http ${era}: ${counts.skills} skills, ${counts.files} files verified`);
        expect(counts.skills).toBe(skills);
      } finally {
        await client.close();
      }
    });
  });
});
