// The kernel's inodes as the low-level edge hands them out: one per (path, content version),
// numbered by the core's version inode, counted by lookups and released when the kernel
// forgets them. Knows nothing of FUSE replies; bounded by the kernel's own forgetting.
import { constants as fsConstants } from 'node:fs';
import type { NodeAttributes } from '../../fs/filesystem-core.js';
import { ATTR, ATTR_FIELDS } from './addon.js';

export const ROOT_INODE = 1;

export interface KernelNode {
  readonly ino: number;
  readonly path: string;
  readonly parent: number;
  readonly name: string;
  nlookup: number;
  /** Encoded for the addon; fixed for the node's life (a new version is a new node). */
  attrs: Float64Array;
  kind: NodeAttributes['kind'];
  /** How long the kernel may keep this node's name and attributes; undefined: the edge's default. */
  cacheSeconds: number | undefined;
}

export interface Ownership {
  uid: number;
  gid: number;
  fileMode: number;
  directoryMode: number;
}

/** The Float64Array the addon reads for a node's attributes. */
export function encodeAttributes(ino: number, attributes: NodeAttributes, owner: Ownership): Float64Array {
  const fields = new Float64Array(ATTR_FIELDS);
  const directory = attributes.kind === 'directory';
  fields[ATTR.ino] = ino;
  fields[ATTR.mode] = directory ? owner.directoryMode : owner.fileMode;
  fields[ATTR.nlink] = directory ? 2 : 1;
  fields[ATTR.uid] = owner.uid;
  fields[ATTR.gid] = owner.gid;
  fields[ATTR.size] = attributes.sizeBytes;
  fields[ATTR.mtimeMs] = attributes.mtimeMs;
  return fields;
}

export class InodeTable {
  private readonly nodes = new Map<number, KernelNode>();
  /** parent -> name -> the inode the kernel was last given for it. */
  private readonly children = new Map<number, Map<string, number>>();

  constructor(root: Omit<KernelNode, 'ino' | 'path' | 'parent' | 'name' | 'nlookup'>) {
    this.nodes.set(ROOT_INODE, { ...root, ino: ROOT_INODE, path: '/', parent: ROOT_INODE, name: '', nlookup: Number.POSITIVE_INFINITY });
  }

  get size(): number {
    return this.nodes.size;
  }

  get(ino: number): KernelNode | undefined {
    return this.nodes.get(ino);
  }

  /** Records one kernel lookup of `name` in `parent` answered with this version; returns the node. */
  lookedUp(parent: KernelNode, name: string, ino: number, attributes: NodeAttributes, owner: Ownership): KernelNode {
    const node = this.counted(parent, name, ino, 1, () => ({ attrs: encodeAttributes(ino, attributes, owner), kind: attributes.kind }));
    // How long the kernel may hold it is the view's policy now (the approvals may have begun or ceased to be watched).
    node.cacheSeconds = attributes.cacheSeconds;
    return node;
  }

  /**
   * Records `times` kernel lookups of `name` in `parent` that the addon answered from the
   * attributes the edge pushed (`attrs`, as pushed); only nodes with the edge's default timeouts are pushed.
   */
  lookedUpInAddon(parent: KernelNode, name: string, attrs: Float64Array, times: number): KernelNode {
    const ino = attrs[ATTR.ino]!;
    return this.counted(parent, name, ino, times, () => {
      const kept = Float64Array.from(attrs);
      kept[ATTR.entryTimeoutSeconds] = 0;
      kept[ATTR.attrTimeoutSeconds] = 0;
      return { attrs: kept, kind: (kept[ATTR.mode]! & fsConstants.S_IFMT) === fsConstants.S_IFDIR ? 'directory' : 'file' };
    });
  }

  private counted(parent: KernelNode, name: string, ino: number, times: number, make: () => Pick<KernelNode, 'attrs' | 'kind'>): KernelNode {
    let node = this.nodes.get(ino);
    if (node === undefined || node.path !== childPath(parent.path, name)) {
      node = { ino, path: childPath(parent.path, name), parent: parent.ino, name, nlookup: 0, cacheSeconds: undefined, ...make() };
      this.nodes.set(ino, node);
    }
    node.nlookup += times;
    let names = this.children.get(parent.ino);
    if (names === undefined) this.children.set(parent.ino, (names = new Map()));
    names.set(name, ino);
    return node;
  }

  /** FORGET: true when the kernel holds the node no more (and it was dropped). */
  forget(ino: number, nlookup: number): KernelNode | undefined {
    const node = this.nodes.get(ino);
    if (node === undefined || ino === ROOT_INODE) return undefined;
    node.nlookup -= nlookup;
    if (node.nlookup > 0) return undefined;
    this.nodes.delete(ino);
    const names = this.children.get(node.parent);
    if (names?.get(node.name) === ino) {
      names.delete(node.name);
      if (names.size === 0) this.children.delete(node.parent);
    }
    return node;
  }

  /** Every node at `prefix` or below it (a path of the core), root excluded. */
  *under(prefix: string): Iterable<KernelNode> {
    const base = prefix === '/' ? '/' : `${prefix.replace(/\/+$/, '')}/`;
    for (const node of this.nodes.values()) {
      if (node.ino === ROOT_INODE) continue;
      if (node.path === prefix || node.path.startsWith(base)) yield node;
    }
  }
}

export function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}
