// listing.ts answers skills/list and skills/get itself so the SDK's per-entry checks run once
// per entry, not per request. Its checks must be the SDK's: for each entry below, the SDK's
// own SkillsExtension (over a custom source) keeps it or drops it with exactly the problems
// entryProblems reports, message for message.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension, type Skill } from '@modelcontextprotocol/server/ext/skills';
import { z } from 'zod';
import { entryProblems } from '../../src/server/listing.js';

const D = `sha256:${'a'.repeat(64)}`;
const res = (uri: string, size = 1): { uri: string; digest: string; size: number } => ({ uri, digest: D, size });
const entry = (uri: string, frontmatter: Record<string, unknown>, resources: unknown): Skill =>
  ({ uri, frontmatter, resources }) as unknown as Skill;

const ENTRIES: Skill[] = [
  entry('skill://pdf/SKILL.md', { name: 'pdf', description: 'd' }, [res('skill://pdf/SKILL.md'), res('skill://pdf/a/b.md')]),
  entry('skill://acme/q-a/SKILL.md', { name: 'q-a', description: 'd', metadata: { k: 'v' } }, [res('skill://acme/q-a/SKILL.md'), res('skill://acme/q-a/Q%26A.md')]),
  entry('skill://Upper/SKILL.md', { name: 'Upper', description: 'd' }, [res('skill://Upper/SKILL.md')]),
  entry('skill://x/SKILL.md', { name: 'y', description: 'd' }, [res('skill://x/SKILL.md')]),
  entry('skill://long/SKILL.md', { name: 'long', description: 'x'.repeat(1025) }, [res('skill://long/SKILL.md')]),
  entry('skill://emoji/SKILL.md', { name: 'emoji', description: '😀'.repeat(1024) }, [res('skill://emoji/SKILL.md')]),
  entry('skill://compat/SKILL.md', { name: 'compat', description: 'd', compatibility: '' }, [res('skill://compat/SKILL.md')]),
  entry('skill://meta/SKILL.md', { name: 'meta', description: 'd', metadata: { k: 1 } }, [res('skill://meta/SKILL.md')]),
  entry('skill://noself/SKILL.md', { name: 'noself', description: 'd' }, [res('skill://noself/other.md')]),
  entry('skill://dup/SKILL.md', { name: 'dup', description: 'd' }, [res('skill://dup/SKILL.md'), res('skill://dup/Q&A.md'), res('skill://dup/Q%26A.md')]),
  entry('skill://out/SKILL.md', { name: 'out', description: 'd' }, [res('skill://out/SKILL.md'), res('skill://other/x.md')]),
  entry('skill://dots/SKILL.md', { name: 'dots', description: 'd' }, [res('skill://dots/SKILL.md'), res('skill://dots/%2E%2E/x')]),
  entry('skill://query/SKILL.md', { name: 'query', description: 'd' }, [res('skill://query/SKILL.md'), res('skill://query/a?b')]),
  entry('skill://badd/SKILL.md', { name: 'badd', description: 'd' }, [{ uri: 'skill://badd/SKILL.md', digest: 'md5:x', size: 1 }]),
  entry('skill://neg/SKILL.md', { name: 'neg', description: 'd' }, [res('skill://neg/SKILL.md', -1)]),
  entry('skill://nodesc/SKILL.md', { name: 'nodesc' }, [res('skill://nodesc/SKILL.md')]),
  entry('skill://notmd/README.md', { name: 'notmd', description: 'd' }, [res('skill://notmd/README.md')]),
  entry('not a uri', { name: 'bad', description: 'd' }, []),
  // Plain URIs (the fast path) next to ones that need parsing, and where the two meet.
  entry('skill://twice/SKILL.md', { name: 'twice', description: 'd' }, [res('skill://twice/SKILL.md'), res('skill://twice/a.md'), res('skill://twice/a.md')]),
  entry('skill://mix/SKILL.md', { name: 'mix', description: 'd' }, [res('skill://mix/SKILL.md'), res('skill://mix/./x.md'), res('skill://mix/x.md')]),
  entry('skill://slash/SKILL.md', { name: 'slash', description: 'd' }, [res('skill://slash/SKILL.md'), res('skill://slash/a%2Fb'), res('skill://slash/a%00')]),
  entry('skill://tilde/SKILL.md', { name: 'tilde', description: 'd' }, [res('skill://tilde/SKILL.md'), res('skill://tilde/~a_b-c.d/e.md'), res('skill://tilde/%7Ea_b-c.d/e.md')]),
  entry('skill://empty/SKILL.md', { name: 'empty', description: 'd' }, [res('skill://empty/SKILL.md'), res('skill://empty//x.md'), res('skill://empty/d/')]),
  entry('skill://up/SKILL.md', { name: 'up', description: 'd' }, [res('skill://up/SKILL.md'), res('skill://up/../up/x.md'), res('skill://up/a b.md')]),
  entry('skill://Up2/SKILL.md', { name: 'up2', description: 'd' }, [res('skill://Up2/SKILL.md'), res('skill://up2/x.md')]),
  entry('skill://acme/deep/nest/SKILL.md', { name: 'nest', description: 'd' }, [res('skill://acme/deep/nest/SKILL.md'), res('skill://acme/deep/nest/a/b/c.txt')]),
];

/** What the SDK's SkillsExtension over a custom source says of each entry: [] kept, else the problems. */
async function sdkVerdicts(entries: readonly Skill[]): Promise<Map<string, string[]>> {
  const warnings = new Map<string, string[]>();
  const extension = new SkillsExtension({
    source: { list: async () => ({ skills: [...entries] }), get: async () => undefined, read: async () => undefined },
    onWarning: (w) => warnings.set(w.path, [w.message]),
  });
  const mcp = new McpServer({ name: 's', version: '0' });
  extension.attach(mcp);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(b);
  const client = new Client({ name: 'c', version: '0' });
  await client.connect(a);
  const page = await client.request({ method: 'skills/list', params: {} }, z.looseObject({ skills: z.array(z.looseObject({ uri: z.string() })) }));
  await client.close();
  const kept = new Set(page.skills.map((skill) => skill.uri));
  const verdicts = new Map<string, string[]>();
  for (const skill of entries) {
    const warning = warnings.get(skill.uri)?.[0];
    verdicts.set(skill.uri, kept.has(skill.uri) ? [] : [warning!]);
  }
  return verdicts;
}

describe('entryProblems', () => {
  it('keeps and drops exactly what the SDK does, with the same messages', async () => {
    const sdk = await sdkVerdicts(ENTRIES);
    for (const skill of ENTRIES) {
      const ours = entryProblems(skill);
      const expected = ours.length === 0 ? [] : [`invalid skill entry from the source: ${ours.join('; ')} (dropped from skills/list)`];
      expect({ uri: skill.uri, verdict: expected }).toEqual({ uri: skill.uri, verdict: sdk.get(skill.uri) });
    }
    // The corpus exercises both outcomes.
    expect([...sdk.values()].filter((v) => v.length === 0).length).toBeGreaterThanOrEqual(3);
    expect([...sdk.values()].filter((v) => v.length > 0).length).toBeGreaterThanOrEqual(10);
  });

  it('computes a verdict once per entry object', () => {
    const skill = ENTRIES[0]!;
    expect(entryProblems(skill)).toBe(entryProblems(skill));
    expect(entryProblems({ ...skill } as Skill)).not.toBe(entryProblems(skill));
  });
});
