// What the two hand-written fake servers (scripted-server.mjs, hostile-server.mjs) make of
// a scenario's skills and files: bytes, listing entries and directory children. Each
// server keeps its own transport and its own ways of misbehaving.
import { sha256 } from './digest.mjs';

/** The bytes a scenario file serves: its base64 `blob`, else its `text`. */
export const bytesOf = (file) => (file.blob !== undefined ? Buffer.from(file.blob, 'base64') : Buffer.from(file.text ?? '', 'utf8'));

/** The bytes a listing describes: `listedText` when the scenario lies about them, else the served ones. */
export const listedBytes = (file) => (file.listedText !== undefined ? Buffer.from(file.listedText, 'utf8') : bytesOf(file));

/** The skills/list (and skills/get) entry of `skill`, its manifest built from `files` (uri -> file). */
export function manifestEntry(skill, files) {
  if (skill.dynamic) return { uri: skill.uri, frontmatter: skill.frontmatter, resources: 'dynamic' };
  const resources = Object.entries(files).map(([uri, file]) => {
    const listed = listedBytes(file);
    return { uri, digest: file.listedDigest ?? sha256(listed), size: file.listedSize ?? listed.length };
  });
  return { uri: skill.uri, frontmatter: skill.frontmatter, resources };
}

/** The children of directory `uri` among `files` (a Map of uri -> file): files and subdirectories, none when it is no directory. */
export function directoryChildren(files, uri) {
  const children = new Map();
  for (const [fileUri, file] of files) {
    if (!fileUri.startsWith(`${uri}/`) || fileUri === 'skill://index.json') continue;
    const rest = fileUri.slice(uri.length + 1);
    const name = rest.split('/')[0];
    if (rest.includes('/')) children.set(name, { uri: `${uri}/${name}`, name, mimeType: 'inode/directory' });
    else children.set(name, { uri: fileUri, name, mimeType: 'text/plain', size: bytesOf(file).length });
  }
  return [...children.values()];
}
