/** What writeTestCorpus wrote: SKILL.md files, all files, and their total bytes. */
export interface TestCorpusSummary {
  skills: number;
  files: number;
  bytes: number;
}

/** One corpus a test runs against; `dir()` resolves (generating if needed) its path. */
export interface CorpusDir {
  name: 'generated' | 'external';
  dir: () => Promise<string>;
}

export const DEFAULT_SEED: number;
export const MAX_FILES_PER_SKILL: number;
export const MAX_BYTES_PER_SKILL: number;

/** Where the corpus's notable cases live (paths relative to the corpus root); the same for every seed. */
export const TEST_CORPUS_LANDMARKS: {
  readonly nestedSkill: string;
  readonly nestedParent: string;
  readonly prefixedSkills: readonly string[];
  readonly tinySkill: string;
  readonly largeMarkdown: string;
  readonly mediumMarkdown: string;
  readonly nonAsciiFiles: readonly string[];
  readonly spacedFile: string;
  readonly deepFile: string;
  readonly png: string;
  readonly pdf: string;
  readonly fonts: readonly string[];
  readonly emptyFile: string;
  readonly oneByteFile: string;
  readonly scripts: readonly string[];
  readonly maxFilesSkill: { readonly dir: string; readonly files: number };
  readonly justUnderBytesSkill: { readonly dir: string; readonly bytes: number };
  readonly atBytesSkill: { readonly dir: string; readonly bytes: number };
};

/** Writes the corpus for `seed` (default 2640) into `dir`; same seed, same bytes. */
export function writeTestCorpus(dir: string, options?: { seed?: number }): Promise<TestCorpusSummary>;

/** The default corpus, generated once per process under os.tmpdir() (removed at exit, or by a later process once this one is gone); resolves to its path. */
export function testCorpusDir(): Promise<string>;

/** The generated corpus, plus the external one when SKILLS_MOUNT_CORPUS names a directory. */
export function corpusDirs(): CorpusDir[];
