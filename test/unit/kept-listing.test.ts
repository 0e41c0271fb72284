import { describe, expect, it } from 'vitest';
import { keptListingDocument, readKeptListing } from '../../src/catalog/kept-listing.js';

const digest = `sha256:${'a'.repeat(64)}`;
const entry = { uri: 'skill://x/SKILL.md', frontmatter: { name: 'x', description: 'd' }, resources: [{ uri: 'skill://x/SKILL.md', digest, size: 3 }] };

describe('the kept listing', () => {
  it('reads back the entries it was saved with, through JSON', () => {
    const document = JSON.parse(JSON.stringify(keptListingDocument('listing', [entry])));
    expect(readKeptListing(document)).toEqual({ generation: 'listing', entries: [entry], problems: [] });
    const index = { name: 'x', type: 'skill-md', description: 'd', url: 'skill://x/SKILL.md', digest, frontmatter: { name: 'x', description: 'd' } };
    const read = readKeptListing(JSON.parse(JSON.stringify(keptListingDocument('index', [index as never]))));
    expect(read).toMatchObject({ generation: 'index', problems: [] });
    expect('entries' in read && read.entries).toHaveLength(1);
  });

  it('an entry edited on disk into another shape is dropped and named; the rest stand', () => {
    const document = JSON.parse(JSON.stringify(keptListingDocument('listing', [entry, entry])));
    document.entries[0].resources = 'all of them';
    expect(readKeptListing(document)).toEqual({ generation: 'listing', entries: [entry], problems: ['kept entry 0: not a skill entry'] });
  });

  it('a document of another format or generation is refused, saying why', () => {
    expect(readKeptListing(null)).toEqual({ problem: 'not an object' });
    expect(readKeptListing({ format: 'other', generation: 'listing', entries: [] })).toEqual({ problem: 'format "other", expected "skills-mount kept listing 1"' });
    expect(readKeptListing({ ...(keptListingDocument('listing', []) as object), generation: 'none' })).toEqual({ problem: 'generation "none"' });
    expect(readKeptListing({ ...(keptListingDocument('listing', []) as object), entries: {} })).toEqual({ problem: 'entries is not an array' });
  });
});
