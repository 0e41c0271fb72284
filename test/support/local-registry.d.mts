/** A registry on 127.0.0.1 serving the lock's production packages from npm's cache. */
export function startLocalRegistry(lockFile: string, cacheDir?: string): Promise<{ url: string; close(): Promise<void> }>;
