// Update subscriptions (docs/protocol.md, Freshness: a skill's SKILL.md is "subscribed once
// per skill read"), bounded by the catalog's maxSubscriptions: at most that many skills are
// subscribed, the rest are served but not subscribed; a failed subscription is logged and
// frees its place.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { UnavailableError } from '../../src/errors.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

function setUp(names: string[], options: { subscribe?: boolean; maxSubscriptions?: number } = {}) {
  const source = new MemorySkillSource();
  for (const name of names) source.addSkill(name, { 'SKILL.md': skillMarkdown(name), 'ref.md': `${name} reference\n`, 'more/notes.md': `${name} notes\n` });
  source.featureFlags = { ...source.featureFlags, subscribe: options.subscribe ?? true };
  const logs: string[] = [];
  const catalog = new ServerCatalog(source, {
    ...DEFAULT_CATALOG_TIMINGS,
    maxSubscriptions: options.maxSubscriptions ?? DEFAULT_CATALOG_TIMINGS.maxSubscriptions,
    log: (line) => logs.push(line),
    cache: new ContentCache(1 << 20),
    hideDynamic: false,
  });
  return { source, catalog, logs };
}

const subscribed = (source: MemorySkillSource) => source.requests.filter((request) => request.method === 'resources/subscribe').map((request) => request.uri);
/** Subscriptions are sent without waiting for them: let their promises settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('update subscriptions', () => {
  it('a skill is subscribed once, by its SKILL.md, however many of its files are read and however often', async () => {
    const { source, catalog } = setUp(['pdf']);
    await catalog.refresh();
    for (const path of ['pdf/ref.md', 'pdf/SKILL.md', 'pdf/more/notes.md', 'pdf/ref.md']) await catalog.read(path);
    await settle();
    expect(subscribed(source)).toEqual(['skill://pdf/SKILL.md']);
  });

  it('at most maxSubscriptions skills are subscribed, in the order first read; later skills are served, not subscribed', async () => {
    const { source, catalog, logs } = setUp(['a', 'b', 'c', 'd'], { maxSubscriptions: 2 });
    await catalog.refresh();
    for (const name of ['c', 'a', 'd', 'b']) expect((await catalog.read(`${name}/ref.md`)).bytes.toString()).toBe(`${name} reference\n`);
    for (const name of ['c', 'a', 'd', 'b']) await catalog.read(`${name}/more/notes.md`);
    await settle();
    expect(subscribed(source)).toEqual(['skill://c/SKILL.md', 'skill://a/SKILL.md']);
    // The bound is said once, naming the first skill past it.
    expect(logs.filter((line) => line.includes('subscriptions held'))).toEqual(['[mem] 2 subscriptions held, the most allowed; skill://d/SKILL.md and later skills learn of changes by re-listing']);
  });

  it('a failed subscription is logged with server and URI, and does not count against the cap', async () => {
    const { source, catalog, logs } = setUp(['a', 'b'], { maxSubscriptions: 1 });
    await catalog.refresh();
    source.failures.set('resources/subscribe', new UnavailableError('no answer within 10000 ms', { server: 'mem', method: 'resources/subscribe', uri: 'skill://a/SKILL.md' }));
    // The read itself does not wait for, or fail with, its subscription.
    expect((await catalog.read('a/SKILL.md')).bytes.toString()).toBe(skillMarkdown('a'));
    await settle();
    expect(logs).toContain('[mem] resources/subscribe skill://a/SKILL.md failed: mem: resources/subscribe skill://a/SKILL.md: no answer within 10000 ms');
    source.failures.delete('resources/subscribe');
    await catalog.read('b/SKILL.md');
    await settle();
    expect(subscribed(source)).toEqual(['skill://a/SKILL.md', 'skill://b/SKILL.md']);
  });

  it('a server that does not accept resources/subscribe is never sent one', async () => {
    const { source, catalog } = setUp(['a'], { subscribe: false });
    await catalog.refresh();
    await catalog.read('a/ref.md');
    await settle();
    expect(subscribed(source)).toEqual([]);
  });
});
