// Media types for served files: by file name for listings, refined by content for reads.
// Knows nothing of MCP; text-vs-binary is decided from the bytes alone.

const BY_EXTENSION: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  text: 'text/plain',
  json: 'application/json',
  jsonl: 'application/jsonl',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  xml: 'application/xml',
  xsd: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'text/x-typescript',
  tsx: 'text/x-typescript',
  jsx: 'text/javascript',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  rb: 'text/x-ruby',
  go: 'text/x-go',
  rs: 'text/x-rust',
  java: 'text/x-java',
  c: 'text/x-c',
  h: 'text/x-c',
  cpp: 'text/x-c++',
  sql: 'application/sql',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/vnd.microsoft.icon',
  pdf: 'application/pdf',
  ttf: 'font/ttf',
  otf: 'font/otf',
  woff: 'font/woff',
  woff2: 'font/woff2',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  wasm: 'application/wasm',
};

// Extensionless names that are conventionally plain text.
const TEXT_NAMES = new Set(['license', 'licence', 'readme', 'notice', 'authors', 'makefile', 'dockerfile', 'changelog']);

const OCTET_STREAM = 'application/octet-stream';

/** The media type implied by a file name; application/octet-stream when unknown. */
export function mimeTypeForName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  if (dot > 0) {
    const known = BY_EXTENSION[fileName.slice(dot + 1).toLowerCase()];
    if (known) return known;
  } else if (TEXT_NAMES.has(fileName.toLowerCase())) {
    return 'text/plain';
  }
  return OCTET_STREAM;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text when they are valid UTF-8 without NUL, else undefined (binary). */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The media type for a read: the name's type, except that unknown-named text is text/plain. */
export function mimeTypeForContent(fileName: string, isText: boolean): string {
  const byName = mimeTypeForName(fileName);
  return byName === OCTET_STREAM && isText ? 'text/plain' : byName;
}
