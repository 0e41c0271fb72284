// A package registry on 127.0.0.1 holding exactly the versions package-lock.json pins for the
// package's runtime dependencies, their tarballs read from npm's own cache (filled by `npm ci`), so
// `npm install -g` of the packed tarball runs as a user's would, with no other network.
// startLocalRegistry() -> { url, close() }.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { homedir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

/** npm's bundled cacache (npm's cache is its format). */
function npmRequire() {
  const npmBin = execFileSync('sh', ['-c', 'readlink -f "$(command -v npm)"'], { encoding: 'utf8' }).trim();
  return createRequire(path.join(path.dirname(npmBin), '..', 'package.json'));
}

/** npm's content cache: `npm config get cache` (npm_config_cache or ~/.npm), then _cacache. */
function npmCacheDir() {
  try {
    return path.join(execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim(), '_cacache');
  } catch {
    return path.join(homedir(), '.npm', '_cacache');
  }
}

/** Packuments of every package the lock installs for production (dev ones left out). */
function packuments(lockFile) {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8'));
  const byName = new Map();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '' || entry.dev || entry.link || !entry.integrity) continue;
    const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const versions = byName.get(name) ?? new Map();
    versions.set(entry.version, { ...entry, name });
    byName.set(name, versions);
  }
  return byName;
}

/** Serves the lock's production packages; tarballs from npm's cache by integrity. */
export async function startLocalRegistry(lockFile, cacheDir = npmCacheDir()) {
  const cacache = npmRequire()('cacache');
  const packages = packuments(lockFile);
  const tarballs = new Map();
  const server = createServer((request, response) => {
    void (async () => {
      const url = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname).slice(1);
      const tarball = tarballs.get(url);
      if (tarball) {
        const { data } = await cacache.get.byDigest(cacheDir, tarball).then((data) => ({ data }));
        response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(data);
        return;
      }
      const versions = packages.get(url);
      if (!versions) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      const base = `http://${request.headers.host}`;
      const doc = { name: url, 'dist-tags': {}, versions: {} };
      for (const [version, entry] of versions) {
        const file = `-/${url}/${version}.tgz`;
        tarballs.set(file, entry.integrity);
        doc.versions[version] = {
          name: url,
          version,
          dependencies: entry.dependencies ?? {},
          optionalDependencies: entry.optionalDependencies ?? {},
          peerDependencies: entry.peerDependencies ?? {},
          peerDependenciesMeta: entry.peerDependenciesMeta ?? {},
          engines: entry.engines ?? {},
          dist: { tarball: `${base}/${file}`, integrity: entry.integrity },
        };
        doc['dist-tags'].latest = version;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    })().catch((error) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
