// What different YAML readers make of one frontmatter block. Harnesses parse SKILL.md with
// whatever YAML library their language has: YAML 1.2 ones (this project's `yaml`, Rust's
// serde_yaml), js-yaml's default schema (gray-matter), YAML 1.1 ones (PyYAML). They disagree where
// an author wants them to: a plain `<<` is a merge key to YAML 1.1 and js-yaml and a string to
// YAML 1.2; NEL, LS and PS are line breaks to YAML 1.1 (so "# note<NEL>hooks: ..." is a comment to
// one reader and a field to another). This module only reads; what is allowed is decided by callers.
import jsYaml from 'js-yaml';
import { parse as parseYaml } from 'yaml';

export interface FrontmatterReading {
  /** Who reads it this way, for a person ("YAML 1.1 (PyYAML), merge keys and NEL/LS/PS line breaks"). */
  reader: string;
  /** The top-level mapping, or undefined when this reader refuses the block (`error` says why). */
  data: Record<string, unknown> | undefined;
  error?: string;
}

/** YAML 1.1's line breaks besides "\n": the text as a 1.1 reader splits it into lines. */
const YAML_1_1_BREAKS = /\r\n?|\u0085|\u2028|\u2029/g;
/** Bounds what an alias bomb costs any of the readers. */
const MAX_ALIASES = 100;

const READERS: ReadonlyArray<{ reader: string; read: (yaml: string) => unknown }> = [
  { reader: 'YAML 1.2 (core schema)', read: (yaml) => parseYaml(yaml, { schema: 'core', uniqueKeys: true, maxAliasCount: MAX_ALIASES }) },
  {
    reader: 'YAML 1.1 (PyYAML and others: merge keys, NEL/LS/PS line breaks)',
    read: (yaml) => parseYaml(yaml.replace(YAML_1_1_BREAKS, '\n'), { version: '1.1', merge: true, uniqueKeys: false, maxAliasCount: MAX_ALIASES }),
  },
  { reader: "js-yaml's default schema (gray-matter and others: merge keys)", read: (yaml) => jsYaml.load(yaml) },
];

/** The block as each reader reads it, in a fixed order (the YAML 1.2 reading, which the mount verifies, first). */
export function frontmatterReadings(yaml: string): FrontmatterReading[] {
  return READERS.map(({ reader, read }) => {
    try {
      const value = read(yaml);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return { reader, data: undefined, error: 'not a YAML mapping' };
      return { reader, data: value as Record<string, unknown> };
    } catch (error) {
      return { reader, data: undefined, error: (error as Error).message.split('\n')[0] ?? 'unreadable' };
    }
  });
}
