// The project's own skills corpus: a deterministic tree of realistic, conformant Agent Skills
// (nested skills, org prefixes, non-ASCII names, binaries, the per-skill limits), built from a seed.
// It knows the Agent Skills rules only as constants; it imports nothing from src/.
import { existsSync, rmSync, statSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { deflateSync } from 'node:zlib';
import { prng } from './prng.mjs';

export const DEFAULT_SEED = 2640;
/** Per-skill limits of the Skills Extension (SEP-2640 final text). */
export const MAX_FILES_PER_SKILL = 512;
export const MAX_BYTES_PER_SKILL = 16 * 1024 * 1024;

/** Where the corpus's notable cases live (paths relative to the corpus root); the same for every seed. */
export const TEST_CORPUS_LANDMARKS = Object.freeze({
  nestedSkill: 'data-pipeline/stages/ingest',
  nestedParent: 'data-pipeline',
  prefixedSkills: Object.freeze(['acme/billing/invoices', 'acme/billing/refunds', 'acme/support/triage']),
  tinySkill: 'commit-message',
  largeMarkdown: 'api-reference/references/endpoints.md',
  mediumMarkdown: 'pdf-forms/references/field-types.md',
  nonAsciiFiles: Object.freeze([
    'localization/références/café.md',
    'localization/用户指南/快速入门.md',
    'localization/glossary/Ångström-Ünits.md',
  ]),
  spacedFile: 'meeting-notes/templates/Weekly sync.md',
  deepFile: 'frontend-scaffold/templates/web/react/src/components/forms/inputs/text-field.tsx',
  png: 'brand-fonts/assets/logo.png',
  pdf: 'pdf-forms/assets/w9-template.pdf',
  fonts: Object.freeze(['brand-fonts/assets/fonts/Corpus-Regular.ttf', 'brand-fonts/assets/fonts/Corpus-Display.otf']),
  emptyFile: 'data-pipeline/stages/ingest/scripts/__init__.py',
  oneByteFile: 'meeting-notes/templates/separator.txt',
  scripts: Object.freeze(['data-pipeline/scripts/run.sh', 'pdf-forms/scripts/fill_form.py']),
  maxFilesSkill: Object.freeze({ dir: 'icon-library', files: MAX_FILES_PER_SKILL }),
  justUnderBytesSkill: Object.freeze({ dir: 'sample-datasets', bytes: MAX_BYTES_PER_SKILL - 1 }),
  atBytesSkill: Object.freeze({ dir: 'ocr-model', bytes: MAX_BYTES_PER_SKILL }),
});

const LARGE_MARKDOWN_BYTES = 200 * 1024;
const encoder = new TextEncoder();

/**
 * Writes the corpus for `seed` into `dir` (created if missing; must not already hold a corpus).
 * Same seed, same bytes; returns how many skills (SKILL.md files), files and bytes it wrote.
 */
export async function writeTestCorpus(dir, { seed = DEFAULT_SEED } = {}) {
  const files = buildCorpus(seed);
  const paths = [...files.keys()].sort();
  const dirs = [...new Set(paths.map((path) => dirname(path)))].sort();
  await mkdir(dir, { recursive: true });
  for (const sub of dirs) if (sub !== '.') await mkdir(join(dir, sub), { recursive: true });
  let bytes = 0;
  let skills = 0;
  const queue = [...paths];
  const worker = async () => {
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      await writeFile(join(dir, path), files.get(path), { mode: 0o644 });
    }
  };
  for (const path of paths) {
    bytes += files.get(path).length;
    if (path.endsWith('/SKILL.md')) skills++;
  }
  await Promise.all(Array.from({ length: 16 }, worker));
  return { skills, files: paths.length, bytes };
}

let cached;

/** The default corpus, generated once per process under os.tmpdir() (removed at exit, or by a later process once this one is gone); resolves to its path. */
export function testCorpusDir() {
  cached ??= materialize(DEFAULT_SEED).catch((error) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

const CORPUS_DIR_NAME = /^skills-mount-test-corpus-\d+-(\d+)(?:\.partial)?$/;

async function materialize(seed) {
  const final = join(tmpdir(), `skills-mount-test-corpus-${seed}-${process.pid}`);
  // Removed at a normal exit; test workers are often killed instead, so each new process
  // also removes the corpora of processes that are gone.
  process.once('exit', () => rmSync(final, { recursive: true, force: true }));
  await removeOrphans();
  // The final name only ever appears by rename, so an existing one is complete.
  if (await isDirectory(final)) return final;
  const partial = `${final}.partial`;
  await rm(partial, { recursive: true, force: true });
  await writeTestCorpus(partial, { seed });
  await rename(partial, final);
  return final;
}

/**
 * The corpora a test should run against: the generated one always, an external one when
 * SKILLS_MOUNT_CORPUS names a directory. Synchronous, so `for (const corpus of corpusDirs())`
 * works at collection time; `dir()` generates or resolves lazily, in a hook.
 */
export function corpusDirs() {
  const corpora = [{ name: 'generated', dir: testCorpusDir }];
  const external = process.env.SKILLS_MOUNT_CORPUS;
  if (external) {
    const path = resolve(external);
    let isDir = false;
    try {
      isDir = existsSync(path) && statSync(path).isDirectory();
    } catch {
      isDir = false;
    }
    if (isDir) corpora.push({ name: 'external', dir: async () => path });
  }
  return corpora;
}

async function removeOrphans() {
  let names;
  try {
    names = await readdir(tmpdir());
  } catch {
    return;
  }
  for (const name of names.sort()) {
    const match = CORPUS_DIR_NAME.exec(name);
    if (!match || Number(match[1]) === process.pid || isAlive(Number(match[1]))) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => {});
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

async function isDirectory(path) {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Building: every skill is a function of its own PRNG (seed mixed with the skill's path), so one
// skill's content never shifts another's. Paths are fixed; contents vary with the seed.

function buildCorpus(seed) {
  const files = new Map();
  const builders = [
    ['pdf-forms', pdfForms],
    ['brand-fonts', brandFonts],
    ['commit-message', commitMessage],
    ['api-reference', apiReference],
    ['data-pipeline', dataPipeline],
    ['acme/billing/refunds', acmeRefunds],
    ['acme/billing/invoices', acmeInvoices],
    ['acme/support/triage', acmeTriage],
    ['localization', localization],
    ['meeting-notes', meetingNotes],
    ['frontend-scaffold', frontendScaffold],
    ['icon-library', iconLibrary],
    ['sample-datasets', sampleDatasets],
    ['ocr-model', ocrModel],
  ];
  for (const [root, build] of builders) {
    const rng = new Rng(mixSeed(seed, root));
    const add = (rel, content) => {
      const path = `${root}/${rel}`;
      if (files.has(path)) throw new Error(`test corpus: ${path} written twice`);
      files.set(path, typeof content === 'string' ? encoder.encode(content) : content);
    };
    build(rng, add, root);
  }
  return files;
}

function mixSeed(seed, label) {
  // FNV-1a over the label, folded with the seed, then one mulberry32 step for avalanche.
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < label.length; i++) hash = Math.imul(hash ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return Math.floor(prng(hash ^ Math.imul(seed >>> 0, 0x9e3779b1))() * 4294967296) >>> 0;
}

class Rng {
  constructor(seed) {
    this.next = prng(seed);
  }
  int(min, max) {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick(items) {
    return items[Math.floor(this.next() * items.length)];
  }
  uint32() {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }
  hex(length) {
    let out = '';
    while (out.length < length) out += this.uint32().toString(16).padStart(8, '0');
    return out.slice(0, length);
  }
  bytes(length) {
    const out = new Uint8Array(length);
    const words = new Uint32Array(out.buffer, 0, length >>> 2);
    for (let i = 0; i < words.length; i++) words[i] = this.uint32();
    for (let i = words.length * 4; i < length; i++) out[i] = this.uint32() & 0xff;
    return out;
  }
  sentence(words, min = 8, max = 18) {
    const count = this.int(min, max);
    const parts = [];
    for (let i = 0; i < count; i++) parts.push(this.pick(words));
    const text = parts.join(' ');
    return `${text[0].toUpperCase()}${text.slice(1)}.`;
  }
  paragraph(words, sentences = this.int(3, 6)) {
    const out = [];
    for (let i = 0; i < sentences; i++) out.push(this.sentence(words));
    return out.join(' ');
  }
}

const COMMON = [
  'the', 'a', 'each', 'every', 'file', 'skill', 'user', 'request', 'result', 'value', 'output', 'input', 'step',
  'check', 'read', 'write', 'keep', 'use', 'when', 'before', 'after', 'only', 'always', 'never', 'first', 'then',
  'with', 'without', 'from', 'into', 'for', 'and', 'or', 'but', 'must', 'should', 'may', 'is', 'are', 'stays',
];

function words(...domain) {
  return [...COMMON, ...domain];
}

function concat(parts) {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function utf8Length(text) {
  return encoder.encode(text).length;
}

/** YAML frontmatter + body. Scalars are written plain when safe, double-quoted otherwise. */
function skillMd(fields, body) {
  const lines = ['---'];
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value)) {
      lines.push(`${key}:`);
      for (const item of value) lines.push(`  - ${scalar(item)}`);
    } else if (typeof value === 'object') {
      lines.push(`${key}:`);
      for (const [k, v] of Object.entries(value)) lines.push(`  ${k}: ${scalar(v)}`);
    } else if (key === 'description' && value.length > 160) {
      // Long descriptions are folded, as real skills write them.
      lines.push(`${key}: >-`);
      for (const line of wrap(value, 100)) lines.push(`  ${line}`);
    } else {
      lines.push(`${key}: ${scalar(value)}`);
    }
  }
  lines.push('---', '');
  return `${lines.join('\n')}\n${body.trimEnd()}\n`;
}

function scalar(value) {
  const plain =
    /^[A-Za-z\u00C0-\uFFFF]/.test(value) && !/: |:$| #|\n|\s$/.test(value) && !/^(true|false|null|yes|no|on|off|y|n)$/i.test(value);
  return plain ? value : JSON.stringify(value);
}

function wrap(text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

const MIT = (holder, year) =>
  `MIT License\n\nCopyright (c) ${year} ${holder}\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n` +
  'of this software and associated documentation files (the "Software"), to deal\nin the Software without restriction, ' +
  'including without limitation the rights\nto use, copy, modify, merge, publish, distribute, sublicense, and/or sell\n' +
  'copies of the Software, and to permit persons to whom the Software is\nfurnished to do so, subject to the following conditions:\n\n' +
  'The above copyright notice and this permission notice shall be included in all\ncopies or substantial portions of the Software.\n\n' +
  'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR\nIMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,\n' +
  'FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.\n';

// --- the skills -------------------------------------------------------------------------------

function pdfForms(rng, add) {
  const vocab = words('form', 'field', 'checkbox', 'signature', 'page', 'widget', 'annotation', 'acroform', 'flatten', 'font', 'taxpayer');
  const fieldTypes = ['text', 'checkbox', 'radio', 'choice', 'signature', 'date', 'number', 'combo'];
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'pdf-forms',
        description:
          'Fill, inspect and flatten PDF forms (AcroForm). Use when the user asks to complete a form such as a W-9, ' +
          'extract the fields of a PDF, or produce a filled, non-editable copy.',
        license: 'Complete terms in LICENSE.txt',
        compatibility: 'Requires Python 3.10+ with pypdf; poppler-utils for previews',
        'allowed-tools': 'Bash(python:*) Read Write',
      },
      `# PDF forms\n\n${rng.paragraph(vocab)}\n\n## Workflow\n\n1. List the fields: \`python scripts/fill_form.py --list assets/w9-template.pdf\`.\n` +
        `2. Write the values to a JSON file keyed by field name (see [field types](references/field-types.md)).\n` +
        `3. Fill and flatten: \`python scripts/fill_form.py assets/w9-template.pdf values.json out.pdf --flatten\`.\n\n` +
        `## Checks\n\n${rng.paragraph(vocab)}\n`,
    ),
  );
  add('LICENSE.txt', MIT('Corpus Forms Contributors', 2020 + rng.int(0, 5)));
  let reference = '# Field types\n\nEvery AcroForm field has a type (`/FT`) and flags (`/Ff`). This table lists what the filler accepts.\n\n';
  reference += '| Type | PDF /FT | Value in JSON | Notes |\n|---|---|---|---|\n';
  for (const type of fieldTypes) reference += `| ${type} | /${type === 'checkbox' || type === 'radio' ? 'Btn' : type === 'signature' ? 'Sig' : type === 'choice' || type === 'combo' ? 'Ch' : 'Tx'} | ${type === 'checkbox' ? 'true / false' : 'string'} | ${rng.sentence(vocab, 4, 8)} |\n`;
  while (utf8Length(reference) < 4 * 1024) reference += `\n## ${rng.pick(fieldTypes)} fields, case ${rng.int(1, 99)}\n\n${rng.paragraph(vocab)}\n`;
  add('references/field-types.md', reference);
  add(
    'scripts/fill_form.py',
    '#!/usr/bin/env python3\n"""Fill an AcroForm PDF from a JSON file of field values."""\nimport argparse\nimport json\n\nfrom pypdf import PdfReader, PdfWriter\n\n\n' +
      'def main() -> None:\n    parser = argparse.ArgumentParser(description=__doc__)\n    parser.add_argument("template")\n    parser.add_argument("values", nargs="?")\n' +
      '    parser.add_argument("output", nargs="?")\n    parser.add_argument("--list", action="store_true")\n    parser.add_argument("--flatten", action="store_true")\n' +
      '    args = parser.parse_args()\n    reader = PdfReader(args.template)\n    if args.list:\n        for name, field in (reader.get_fields() or {}).items():\n' +
      '            print(f"{name}\\t{field.get(\'/FT\')}")\n        return\n    writer = PdfWriter(clone_from=reader)\n    with open(args.values, encoding="utf-8") as handle:\n' +
      '        values = json.load(handle)\n    for page in writer.pages:\n        writer.update_page_form_field_values(page, values, auto_regenerate=False)\n' +
      `    if args.flatten:\n        writer.remove_annotations(subtypes="/Widget")\n    with open(args.output, "wb") as handle:\n        writer.write(handle)\n\n\n# build ${rng.hex(12)}\nif __name__ == "__main__":\n    main()\n`,
  );
  add('assets/w9-template.pdf', pdfDocument(rng));
}

function brandFonts(rng, add) {
  const vocab = words('typeface', 'weight', 'kerning', 'palette', 'logo', 'contrast', 'heading', 'body', 'baseline', 'glyph');
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'brand-fonts',
        description:
          "Applies the Corpus brand's typefaces, colours and logo to documents, slides and web artifacts. Use when an " +
          'artifact should follow the brand guidelines or needs the bundled fonts.',
        license: 'SIL Open Font License 1.1 for the fonts; see OFL.txt',
        metadata: { owner: 'design-systems', version: `${rng.int(1, 4)}.${rng.int(0, 9)}`, 'primary-colour': `#${rng.hex(6)}` },
      },
      `# Brand fonts\n\n${rng.paragraph(vocab)}\n\n- Body text: \`assets/fonts/Corpus-Regular.ttf\`\n- Display: \`assets/fonts/Corpus-Display.otf\`\n` +
        `- Logo: \`assets/logo.png\` (never stretched)\n\n${rng.paragraph(vocab)}\n`,
    ),
  );
  add(
    'OFL.txt',
    `Copyright ${2015 + rng.int(0, 9)} The Corpus Project Authors\n\nThis Font Software is licensed under the SIL Open Font License, Version 1.1.\n` +
      'This license is copied below, and is also available with a FAQ at:\nhttps://openfontlicense.org\n\n' +
      `${rng.paragraph(vocab, 8)}\n`,
  );
  add('assets/fonts/Corpus-Regular.ttf', fontFile(rng, 0x00010000, ['OS/2', 'cmap', 'glyf', 'head', 'hhea', 'hmtx', 'loca', 'maxp', 'name', 'post'], 48 * 1024));
  add('assets/fonts/Corpus-Display.otf', fontFile(rng, 0x4f54544f, ['CFF ', 'OS/2', 'cmap', 'head', 'hhea', 'hmtx', 'maxp', 'name', 'post'], 32 * 1024));
  add('assets/logo.png', pngImage(rng, 16, 16));
  add('assets/palette.json', `${JSON.stringify({ primary: `#${rng.hex(6)}`, secondary: `#${rng.hex(6)}`, accent: `#${rng.hex(6)}`, ink: '#141413' }, null, 2)}\n`);
}

function commitMessage(rng, add) {
  const verbs = ['Summarize', 'Describe', 'Explain', 'Write'];
  add(
    'SKILL.md',
    skillMd({ name: 'commit-message', description: `${rng.pick(verbs)} staged changes as a conventional commit message.` }, 'Subject line under 72 characters, imperative mood.\n'),
  );
}

function apiReference(rng, add) {
  const vocab = words('endpoint', 'token', 'page', 'cursor', 'header', 'status', 'retry', 'timeout', 'payload', 'schema', 'tenant', 'scope');
  const resources = ['accounts', 'invoices', 'payments', 'refunds', 'customers', 'webhooks', 'events', 'subscriptions', 'plans', 'coupons', 'disputes', 'payouts'];
  const methods = ['GET', 'POST', 'PATCH', 'DELETE'];
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'api-reference',
        description:
          'Reference for the Corpus REST API (v3): every endpoint, parameter, error code and pagination rule. Use when ' +
          'writing or debugging code that calls the API, or when the user asks what an endpoint returns.',
        license: 'Apache-2.0',
        metadata: { 'api-version': '3', generated: 'true' },
        'allowed-tools': ['Read', 'Grep', 'WebFetch'],
      },
      `# Corpus API reference\n\n${rng.paragraph(vocab)}\n\nThe endpoint reference is long: search it (\`grep -n '^### ' references/endpoints.md\`) ` +
        'rather than reading it whole.\n\n## Authentication\n\nSend `Authorization: Bearer <token>` on every request.\n',
    ),
  );
  let doc = '# Endpoints\n\n';
  for (let n = 0; utf8Length(doc) < LARGE_MARKDOWN_BYTES; n++) {
    const resource = resources[n % resources.length];
    const method = methods[Math.floor(n / resources.length) % methods.length];
    doc += `### ${method} /v3/${resource}${method === 'GET' && n % 2 ? '' : '/{id}'} (${n + 1})\n\n${rng.paragraph(vocab)}\n\n`;
    doc += '| Parameter | Type | Required | Description |\n|---|---|---|---|\n';
    for (let p = rng.int(2, 5); p > 0; p--) doc += `| \`${rng.pick(vocab)}_${rng.pick(vocab)}\` | ${rng.pick(['string', 'integer', 'boolean', 'object'])} | ${rng.pick(['yes', 'no'])} | ${rng.sentence(vocab, 5, 10)} |\n`;
    doc += `\n\`\`\`json\n${JSON.stringify({ id: `${resource.slice(0, 3)}_${rng.hex(16)}`, object: resource.slice(0, -1), amount: rng.int(100, 99999), currency: 'eur', livemode: false }, null, 2)}\n\`\`\`\n\n`;
  }
  add('references/endpoints.md', doc);
  add('references/errors.md', `# Errors\n\n| Code | Meaning |\n|---|---|\n| 400 | ${rng.sentence(vocab, 4, 8)} |\n| 401 | Missing or invalid token. |\n| 404 | No such object. |\n| 429 | ${rng.sentence(vocab, 4, 8)} |\n`);
}

function dataPipeline(rng, add) {
  const vocab = words('batch', 'stage', 'schema', 'partition', 'parquet', 'bucket', 'row', 'column', 'backfill', 'watermark');
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'data-pipeline',
        description: 'Runs and debugs the nightly analytics pipeline (ingest, transform, publish). Use for failed runs, backfills or schema changes.',
        metadata: { team: 'data-platform', 'on-call': 'data-oncall' },
      },
      `# Data pipeline\n\n${rng.paragraph(vocab)}\n\nEach stage under \`stages/\` is documented on its own; \`stages/ingest\` is a skill of its own.\n\n` +
        'Run everything with `bash scripts/run.sh --date YYYY-MM-DD`.\n',
    ),
  );
  add(
    'scripts/run.sh',
    `#!/usr/bin/env bash\n# Runs the pipeline for one date, stage by stage.\nset -euo pipefail\n\ndate="\${2:-$(date -u +%F)}"\nfor stage in ingest transform publish; do\n` +
      `  echo "[$stage] $date"\n  python -m "stages.$stage" --date "$date" --run-id ${rng.hex(8)}\ndone\n`,
  );
  add('stages/transform/README.md', `# Transform\n\n${rng.paragraph(vocab)}\n`);
  add('stages/publish/README.md', `# Publish\n\n${rng.paragraph(vocab)}\n`);
  add(
    'stages/ingest/SKILL.md',
    skillMd(
      {
        name: 'ingest',
        description: 'Loads raw event files from the landing bucket into partitioned tables. Use when ingest fails or a source is added.',
        compatibility: 'Python 3.11, pyarrow 15+',
      },
      `# Ingest\n\n${rng.paragraph(vocab)}\n\nSources are declared in \`config/sources.yaml\`.\n`,
    ),
  );
  add('stages/ingest/scripts/__init__.py', '');
  add(
    'stages/ingest/scripts/ingest.py',
    '"""Copy one day of raw events into the warehouse."""\nimport sys\n\n\ndef ingest(date: str) -> int:\n    rows = 0\n' +
      `    # source checksum ${rng.hex(16)}\n    print(f"ingested {rows} rows for {date}")\n    return rows\n\n\nif __name__ == "__main__":\n    ingest(sys.argv[1])\n`,
  );
  let sources = 'sources:\n';
  for (const name of ['clickstream', 'orders', 'inventory']) sources += `  - name: ${name}\n    path: s3://landing/${name}/\n    partitions: ${rng.int(4, 64)}\n`;
  add('stages/ingest/config/sources.yaml', sources);
}

function acmeRefunds(rng, add) {
  const vocab = words('refund', 'charge', 'customer', 'order', 'partial', 'approval', 'ledger', 'reason', 'chargeback');
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'refunds',
        description: 'Issue and audit customer refunds under the Acme billing policy. Use when a support agent or customer asks for money back.',
        license: 'Proprietary',
        metadata: { org: 'acme', domain: 'billing', 'policy-version': `2024.${rng.int(1, 12)}` },
        'allowed-tools': 'Read',
      },
      `# Refunds\n\n${rng.paragraph(vocab)}\n\nRead \`policy.md\` before any refund over 500 EUR.\n`,
    ),
  );
  add('policy.md', `# Refund policy\n\n${rng.paragraph(vocab)}\n\n${rng.paragraph(vocab)}\n`);
}

function acmeInvoices(rng, add) {
  const vocab = words('invoice', 'line', 'tax', 'vat', 'due', 'net', 'total', 'credit', 'note', 'customer');
  add(
    'SKILL.md',
    skillMd(
      { name: 'invoices', description: 'Create, correct and explain Acme invoices and credit notes, including VAT rules per country.', metadata: { org: 'acme', domain: 'billing' } },
      `# Invoices\n\n${rng.paragraph(vocab)}\n\nTemplates: \`templates/invoice.html\`.\n`,
    ),
  );
  add('templates/invoice.html', `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Invoice {{number}}</title></head>\n<body>\n<h1>Invoice {{number}}</h1>\n<p>${rng.sentence(vocab)}</p>\n</body>\n</html>\n`);
}

function acmeTriage(rng, add) {
  const vocab = words('ticket', 'priority', 'severity', 'queue', 'escalate', 'customer', 'outage', 'label', 'assign');
  add(
    'SKILL.md',
    skillMd(
      { name: 'triage', description: 'Triage incoming Acme support tickets: set severity, label, and route to the right queue.', metadata: { org: 'acme', domain: 'support' } },
      `# Ticket triage\n\n${rng.paragraph(vocab)}\n\n| Severity | Response |\n|---|---|\n| S1 | 15 minutes |\n| S2 | 4 hours |\n| S3 | next business day |\n`,
    ),
  );
}

function localization(rng, add) {
  const vocab = words('locale', 'string', 'plural', 'translation', 'glossary', 'context', 'tone', 'placeholder');
  const french = ['le', 'la', 'les', 'café', 'crème', 'élève', 'écrire', 'traduire', 'à', 'déjà', 'où', 'ça', 'garçon', 'fenêtre', 'naïf', 'être'];
  const chinese = ['用户', '指南', '快速', '入门', '设置', '翻译', '语言', '文件', '检查', '保存'];
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'localization',
        description: 'Translate and review UI strings for French, German and Simplified Chinese — keeps placeholders, plurals and the glossary (e.g. “café”, “快速入门”) consistent.',
        license: 'CC-BY-4.0',
        metadata: { locales: 'fr-FR de-DE zh-CN', reviewer: 'Zoë Müller' },
      },
      `# Localization\n\n${rng.paragraph(vocab)}\n\n- French notes: [café](références/café.md)\n- 中文：[快速入门](用户指南/快速入门.md)\n- Units: [Ångström](glossary/Ångström-Ünits.md)\n`,
    ),
  );
  add('références/café.md'.normalize('NFC'), `# Café — notes de traduction\n\n${rng.paragraph(french)}\n\n${rng.paragraph(french)}\n`);
  add('用户指南/快速入门.md', `# 快速入门\n\n${Array.from({ length: 6 }, () => Array.from({ length: rng.int(8, 16) }, () => rng.pick(chinese)).join('') + '。').join('')}\n`);
  add('glossary/Ångström-Ünits.md'.normalize('NFC'), `# Ångström and other units\n\n| en | fr | de |\n|---|---|---|\n| ångström | ångström | Ångström |\n| degree | degré | Grad |\n\n${rng.paragraph(vocab)}\n`);
}

function meetingNotes(rng, add) {
  const vocab = words('agenda', 'decision', 'owner', 'action', 'item', 'blocker', 'update', 'attendee', 'follow-up');
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'meeting-notes',
        description: 'Turns a meeting transcript into notes with decisions and action items, using the team templates.',
        'allowed-tools': ['Read', 'Write'],
      },
      `# Meeting notes\n\n${rng.paragraph(vocab)}\n\nTemplates live in \`templates/\`; use \`templates/Weekly sync.md\` for recurring meetings.\n`,
    ),
  );
  let template = '# Weekly sync — {{date}}\n\n## Attendees\n\n- \n\n## Decisions\n\n';
  while (utf8Length(template) < 3 * 1024) template += `### ${rng.pick(vocab)} ${rng.pick(vocab)}\n\n${rng.paragraph(vocab)}\n\n`;
  add('templates/Weekly sync.md', template);
  add('templates/separator.txt', '\n');
  add('templates/one-on-one.md', `# 1:1 — {{name}}\n\n${rng.paragraph(vocab)}\n`);
}

function frontendScaffold(rng, add) {
  const vocab = words('component', 'prop', 'state', 'layout', 'token', 'story', 'render', 'accessible', 'label', 'focus');
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'frontend-scaffold',
        description: 'Scaffolds React + TypeScript front ends from the house templates: components, forms, stories and tests.',
        compatibility: 'Node.js 20+, npm 10+',
        'allowed-tools': 'Bash(npm:*) Bash(bash:*) Read Write',
      },
      `# Frontend scaffold\n\n${rng.paragraph(vocab)}\n\nRun \`bash scripts/new-app.sh my-app\`, then copy components from \`templates/web/react/src/components/\`.\n`,
    ),
  );
  add('scripts/new-app.sh', `#!/bin/sh\nset -eu\nname="$1"\nmkdir -p "$name/src"\ncp -R templates/web/react/src/. "$name/src/"\necho "created $name (${rng.hex(6)})"\n`);
  const base = 'templates/web/react/src/components/forms/inputs';
  add(`${base}/text-field.tsx`, `import { useId } from 'react';\n\n/** ${rng.sentence(vocab, 5, 9)} */\nexport function TextField({ label }: { label: string }) {\n  const id = useId();\n  return (\n    <>\n      <label htmlFor={id}>{label}</label>\n      <input id={id} type="text" />\n    </>\n  );\n}\n`);
  add(`${base}/text-field.test.tsx`, `import { render } from '@testing-library/react';\nimport { TextField } from './text-field';\n\ntest('labels its input', () => {\n  render(<TextField label="Name" />);\n});\n`);
  add('templates/web/react/src/components/forms/README.md', `# Forms\n\n${rng.paragraph(vocab)}\n`);
  add('templates/web/react/src/main.tsx', "import { createRoot } from 'react-dom/client';\n\ncreateRoot(document.getElementById('root')!).render(null);\n");
  add('templates/web/react/package.json', `${JSON.stringify({ name: 'scaffold', private: true, type: 'module', scripts: { dev: 'vite', build: 'tsc && vite build' } }, null, 2)}\n`);
}

function iconLibrary(rng, add) {
  const categories = ['arrows', 'charts', 'communication', 'devices', 'editing', 'files', 'maps', 'media', 'people', 'security', 'shapes', 'weather'];
  const shapes = ['circle', 'square', 'outline', 'filled', 'small', 'large', 'rounded', 'sharp', 'duotone', 'thin', 'bold', 'alt', 'plus', 'minus', 'slash', 'dot', 'badge', 'stack', 'split', 'off', 'on', 'up', 'down', 'left', 'right', 'half', 'full', 'empty', 'check', 'cross', 'star', 'heart', 'flag', 'pin', 'tag', 'lock', 'key', 'bell', 'eye', 'gear', 'home', 'link', 'grid', 'wave', 'spark', 'ring'];
  const fixed = 4; // SKILL.md, LICENSE, icons/index.json, scripts/build_sprite.py
  const names = [];
  for (const category of categories) for (const shape of shapes) names.push(`${category}/${category.replace(/s$/, '')}-${shape}.svg`);
  names.sort();
  const icons = names.slice(0, MAX_FILES_PER_SKILL - fixed);
  add(
    'SKILL.md',
    skillMd(
      {
        name: 'icon-library',
        description: `The house icon set (${icons.length} SVG icons in ${categories.length} categories). Use to pick, recolour or embed icons in UI and documents.`,
        license: 'MIT',
        metadata: { icons: String(icons.length), grid: '24' },
      },
      '# Icon library\n\nFind an icon in `icons/index.json`, then inline the SVG. Build a sprite with `python scripts/build_sprite.py`.\n',
    ),
  );
  add('LICENSE', MIT('Corpus Icons', 2019 + rng.int(0, 6)));
  add('icons/index.json', `${JSON.stringify(icons.map((icon) => ({ name: icon.slice(icon.indexOf('/') + 1, -4), category: icon.slice(0, icon.indexOf('/')) })), null, 1)}\n`);
  add('scripts/build_sprite.py', '"""Concatenate every icon into one <svg> sprite."""\nimport pathlib\n\nicons = sorted(pathlib.Path("icons").rglob("*.svg"))\nprint(f"{len(icons)} icons")\n');
  for (const icon of icons) {
    let path = `M${rng.int(2, 6)} ${rng.int(2, 6)}`;
    for (let i = rng.int(3, 7); i > 0; i--) path += ` L${rng.int(2, 22)} ${rng.int(2, 22)}`;
    add(`icons/${icon}`, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2"><path d="${path} Z"/></svg>\n`);
  }
}

/** `add` that also counts the bytes added, for the skills built to an exact total. */
function byteCounter(add) {
  let total = 0;
  const put = (rel, content) => {
    const bytes = typeof content === 'string' ? encoder.encode(content) : content;
    total += bytes.length;
    add(rel, bytes);
  };
  return { put, used: () => total };
}

function sampleDatasets(rng, add, root) {
  const target = TEST_CORPUS_LANDMARKS.justUnderBytesSkill.bytes;
  const { put, used } = byteCounter(add);
  put(
    'SKILL.md',
    skillMd(
      {
        name: 'sample-datasets',
        description: 'Small, versioned sample datasets (NumPy arrays and CSV labels) for notebooks and tests. Use when an example needs realistic data offline.',
        license: 'CC0-1.0',
        metadata: { format: 'npy', 'total-bytes': String(target) },
      },
      '# Sample datasets\n\nLoad with `python scripts/load.py data/features-000.npy`. Shapes and dtypes are in `data/schema.json`.\n',
    ),
  );
  put('scripts/load.py', 'import sys\n\nimport numpy as np\n\narray = np.load(sys.argv[1])\nprint(array.dtype, array.shape)\n');
  let labels = 'id,label\n';
  for (let i = 0; i < 200; i++) labels += `${i},${rng.pick(['cat', 'dog', 'bird', 'fish'])}\n`;
  put('data/labels.csv', labels);
  const shards = [0, 1, 2].map((i) => ({ rel: `data/features-00${i}.npy`, rows: 4096, cols: 256 }));
  put('data/schema.json', `${JSON.stringify({ shards: shards.map((s) => ({ file: s.rel, dtype: '<f4', shape: [s.rows, s.cols] })), raw: 'data/raw/capture-003.npy' }, null, 2)}\n`);
  for (const shard of shards) put(shard.rel, npyArray(`'<f4'`, `(${shard.rows}, ${shard.cols})`, rng.bytes(shard.rows * shard.cols * 4)));
  // The last array takes exactly the bytes left, so the skill totals `target`.
  const left = target - used() - 128;
  if (left <= 0) throw new Error(`test corpus: ${root} is over its byte budget`);
  put('data/raw/capture-003.npy', npyArray(`'|u1'`, `(${left},)`, rng.bytes(left)));
}

function ocrModel(rng, add, root) {
  const target = TEST_CORPUS_LANDMARKS.atBytesSkill.bytes;
  const { put, used } = byteCounter(add);
  put(
    'SKILL.md',
    skillMd(
      {
        name: 'ocr-model',
        description: 'Runs the bundled on-device OCR model on scanned pages and photos, returning text with bounding boxes. Use when text must be read from an image without network access.',
        license: 'Apache-2.0',
        compatibility: 'Python 3.10+, onnxruntime or safetensors + torch; 2 GB RAM',
        metadata: { architecture: 'crnn', parameters: '4.2M', 'total-bytes': String(target) },
        'allowed-tools': ['Bash(python:*)', 'Read'],
      },
      '# OCR model\n\n`python scripts/run_ocr.py page.png` prints one line per detected text box: `x y w h text`.\n\nWeights are split in four safetensors shards under `model/`.\n',
    ),
  );
  put('scripts/run_ocr.py', `"""Run OCR on an image with the bundled weights."""\nimport sys\n\nSHARDS = [f"model/weights-{i:05d}-of-00004.safetensors" for i in range(1, 5)]\nBUILD = "${rng.hex(12)}"\n\nprint(sys.argv[1:], SHARDS, BUILD)\n`);
  put('model/config.json', `${JSON.stringify({ architecture: 'crnn', hidden_size: 256, vocab_size: 97, image_height: 32, seed: rng.uint32() }, null, 2)}\n`);
  const shardBytes = 3 * 1024 * 1024;
  for (let i = 1; i <= 3; i++) put(`model/weights-0000${i}-of-00004.safetensors`, safetensors(rng, `layer${i}.weight`, shardBytes));
  const left = target - used() - 8 - SAFETENSORS_HEADER_BYTES;
  if (left <= 0) throw new Error(`test corpus: ${root} is over its byte budget`);
  put('model/weights-00004-of-00004.safetensors', safetensors(rng, 'head.weight', left));
}

// --- binary formats ---------------------------------------------------------------------------

/** A NumPy .npy v1.0 file with a 128-byte header. */
function npyArray(descr, shape, data) {
  const dict = `{'descr': ${descr}, 'fortran_order': False, 'shape': ${shape}, }`;
  const header = `${dict}${' '.repeat(128 - 10 - dict.length - 1)}\n`;
  const preamble = new Uint8Array(10);
  preamble.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(preamble.buffer).setUint16(8, header.length, true);
  return concat([preamble, encoder.encode(header), data]);
}

const SAFETENSORS_HEADER_BYTES = 256;

/** A safetensors file: u64 header length, a JSON header padded with spaces, one U8 tensor of `dataBytes`. */
function safetensors(rng, tensor, dataBytes) {
  const json = JSON.stringify({ __metadata__: { format: 'pt', build: rng.hex(8) }, [tensor]: { dtype: 'U8', shape: [dataBytes], data_offsets: [0, dataBytes] } });
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(SAFETENSORS_HEADER_BYTES), true);
  return concat([prefix, encoder.encode(json.padEnd(SAFETENSORS_HEADER_BYTES, ' ')), rng.bytes(dataBytes)]);
}

/** An sfnt (TrueType/OpenType) file: a correct table directory and checksums over random table data. */
function fontFile(rng, sfntVersion, tags, approxBytes) {
  const numTables = tags.length;
  const entrySelector = Math.floor(Math.log2(numTables));
  const searchRange = 2 ** entrySelector * 16;
  const lengths = tags.map((tag) => (tag === 'head' ? 54 : tag === 'maxp' ? 32 : Math.max(64, Math.floor((approxBytes / numTables) * (0.5 + rng.next())))));
  let offset = 12 + 16 * numTables;
  const tables = tags.map((tag, i) => {
    const data = rng.bytes(lengths[i]);
    if (tag === 'head') {
      const view = new DataView(data.buffer);
      view.setUint32(0, 0x00010000); // version
      view.setUint32(8, 0); // checkSumAdjustment, computed below
      view.setUint32(12, 0x5f0f3cf5); // magicNumber
      view.setUint16(18, 1000); // unitsPerEm
    }
    const table = { tag, data, offset };
    offset += (data.length + 3) & ~3;
    return table;
  });
  const out = new Uint8Array(offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, sfntVersion);
  view.setUint16(4, numTables);
  view.setUint16(6, searchRange);
  view.setUint16(8, entrySelector);
  view.setUint16(10, numTables * 16 - searchRange);
  tables.forEach((table, i) => {
    out.set(table.data, table.offset);
    const record = 12 + i * 16;
    for (let c = 0; c < 4; c++) out[record + c] = table.tag.charCodeAt(c);
    view.setUint32(record + 4, sfntChecksum(out, table.offset, table.data.length));
    view.setUint32(record + 8, table.offset);
    view.setUint32(record + 12, table.data.length);
  });
  const head = tables.find((table) => table.tag === 'head');
  view.setUint32(head.offset + 8, (0xb1b0afba - sfntChecksum(out, 0, out.length)) >>> 0);
  return out;
}

function sfntChecksum(bytes, offset, length) {
  let sum = 0;
  // Tables are zero-padded to four bytes, so a short last word reads its padding as zeros.
  for (let i = 0; i < length; i += 4) {
    const word = ((bytes[offset + i] << 24) | ((bytes[offset + i + 1] ?? 0) << 16) | ((bytes[offset + i + 2] ?? 0) << 8) | (bytes[offset + i + 3] ?? 0)) >>> 0;
    sum = (sum + word) >>> 0;
  }
  return sum;
}

/** A valid one-page PDF 1.7: text plus an uncompressed RGB image XObject (a binary stream), with a correct xref. */
function pdfDocument(rng) {
  const side = 32;
  const pixels = rng.bytes(side * side * 3);
  const content = encoder.encode(`BT /F1 18 Tf 72 720 Td (Form W-9 template ${rng.hex(6)}) Tj ET\nq 128 0 0 128 72 560 cm /Im1 Do Q\n`);
  const parts = [];
  const offsets = [];
  let length = 0;
  const push = (chunk) => {
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    parts.push(bytes);
    length += bytes.length;
  };
  push('%PDF-1.7\n');
  push(new Uint8Array([0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a])); // binary marker comment
  const object = (n, body, stream) => {
    offsets[n] = length;
    push(`${n} 0 obj\n${body}\n`);
    if (stream) {
      push('stream\n');
      push(stream);
      push('\nendstream\n');
    }
    push('endobj\n');
  };
  object(1, '<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] >> >>');
  object(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  object(3, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> >> >>');
  object(4, `<< /Length ${content.length} >>`, content);
  object(5, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  object(6, `<< /Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length ${pixels.length} >>`, pixels);
  const xref = length;
  let table = `xref\n0 7\n0000000000 65535 f \n`;
  for (let n = 1; n <= 6; n++) table += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  push(`${table}trailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return concat(parts);
}

/** A real PNG: RGBA 8-bit, filter 0 rows, zlib-deflated IDAT, correct CRCs. */
function pngImage(rng, width, height) {
  const raw = new Uint8Array(height * (1 + width * 4));
  const [r, g, b] = [rng.int(0, 255), rng.int(0, 255), rng.int(0, 255)];
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 4);
    raw[row] = 0;
    for (let x = 0; x < width; x++) {
      const at = row + 1 + x * 4;
      const inside = (x - width / 2) ** 2 + (y - height / 2) ** 2 < (width / 2.5) ** 2;
      raw.set(inside ? [r, g, b, 255] : [0, 0, 0, 0], at);
    }
  }
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return concat([
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('tEXt', encoder.encode(`Software\0skills-mount test corpus ${rng.hex(8)}`)),
    pngChunk('IDAT', new Uint8Array(deflateSync(raw, { level: 9 }))),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

function pngChunk(type, data) {
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) chunk[4 + i] = type.charCodeAt(i);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  return chunk;
}

let crcTable;
function crc32(bytes) {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
