// The container and Kubernetes recipes (contrib/container/, contrib/kubernetes/, the manifests
// in docs/agents.md and docs/service.md): every manifest valid against the Kubernetes schemas,
// strictly; what a reviewer checks of each (propagation, privileges, the parent of the
// mountpoint, one image); the Dockerfile's entrypoint; the entrypoint run with a fake
// skills-mount that prints its argv. No FUSE, no mounts, no cluster.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseCommandLine } from '../../src/cli/command-line.js';
import { loadMountConfig } from '../../src/config/config.js';
import type { ServeOptions } from '../../src/cli/serve-command.js';
import { lockedApprovals } from '../../src/team/locked-approvals.js';
import { loadPolicy } from '../../src/team/policy.js';
import { mountableServers } from '../../src/team/view-approvals.js';
import { manifestProblems } from '../support/kubernetes-schema.js';
import { TempDirs } from '../support/temp-dir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const KUBERNETES_DIR = path.join(ROOT, 'contrib', 'kubernetes');
const DOCKERFILE = path.join(ROOT, 'contrib', 'container', 'Dockerfile');
const ENTRYPOINT = path.join(ROOT, 'contrib', 'container', 'entrypoint.sh');
const DOCS = ['docs/agents.md', 'docs/service.md'];
const IMAGE = 'ghcr.io/skills-mount/skills-mount:0.1.0';
/** The kinds whose pod spec runs the image. */
const RUNS_PODS = ['Pod', 'DaemonSet', 'Deployment'];

const temps = new TempDirs('skills-mount-k8s-');
afterEach(() => temps.removeAll());

type Json = Record<string, unknown>;
interface Manifest {
  /** file, and document number or fenced block, for messages */
  where: string;
  doc: Json;
}

function yamlDocuments(text: string, where: string): Manifest[] {
  return parseAllDocuments(text).flatMap((document, index) => {
    if (document.errors.length > 0) throw new Error(`${where} document ${index + 1}: ${document.errors[0]!.message}`);
    const doc: unknown = document.toJS({ maxAliasCount: 100 });
    return doc === null ? [] : [{ where: `${where} document ${index + 1}`, doc: doc as Json }];
  });
}

function recipeManifests(): Manifest[] {
  return readdirSync(KUBERNETES_DIR)
    .filter((name) => name.endsWith('.yaml') || name.endsWith('.yml'))
    .sort()
    .flatMap((name) => yamlDocuments(readFileSync(path.join(KUBERNETES_DIR, name), 'utf8'), `contrib/kubernetes/${name}`));
}

/** Every ```yaml block of the docs that is a Kubernetes object (has apiVersion and kind). */
function docsManifests(): Manifest[] {
  return DOCS.flatMap((file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    return [...text.matchAll(/^```ya?ml\n([\s\S]*?)^```$/gm)].flatMap((block, index) =>
      yamlDocuments(block[1]!, `${file} yaml block ${index + 1}`).filter(({ doc }) => typeof doc === 'object' && 'apiVersion' in doc && 'kind' in doc),
    );
  });
}

function named(kind: string, name: string, from: Manifest[] = recipeManifests()): Json {
  const found = from.filter(({ doc }) => doc['kind'] === kind && (doc['metadata'] as Json | undefined)?.['name'] === name);
  expect(found.length, `${kind} ${name}`).toBeGreaterThan(0);
  return found[0]!.doc;
}

/** A pod's (or a pod template's) spec. */
function podSpec(doc: Json): Json {
  if (doc['kind'] === 'Pod') return doc['spec'] as Json;
  return ((doc['spec'] as Json)['template'] as Json)['spec'] as Json;
}

function containersOf(spec: Json): Json[] {
  return [...((spec['initContainers'] as Json[] | undefined) ?? []), ...((spec['containers'] as Json[] | undefined) ?? [])];
}

function container(spec: Json, name: string): Json {
  const found = containersOf(spec).find((candidate) => candidate['name'] === name);
  expect(found, `container ${name}`).toBeDefined();
  return found!;
}

function volume(spec: Json, name: string): Json {
  const found = (spec['volumes'] as Json[]).find((candidate) => candidate['name'] === name);
  expect(found, `volume ${name}`).toBeDefined();
  return found!;
}

function mountOf(box: Json, volumeName: string): Json {
  const found = (box['volumeMounts'] as Json[]).find((candidate) => candidate['name'] === volumeName);
  expect(found, `volumeMount of ${volumeName} in ${String(box['name'])}`).toBeDefined();
  return found!;
}

function envValue(box: Json, name: string): string | undefined {
  return ((box['env'] as Json[] | undefined) ?? []).find((entry) => entry['name'] === name)?.['value'] as string | undefined;
}

/** A path in the entrypoint's defaults: ${SKILLS_MOUNT_POINT:-...}. */
function entrypointDefault(variable: string): string {
  const match = new RegExp(`\\$\\{${variable}:-([^}]+)\\}`).exec(readFileSync(ENTRYPOINT, 'utf8'));
  expect(match, variable).not.toBeNull();
  return match![1]!;
}

/** The command line the entrypoint makes of a container's args in mount mode. */
function mountCommandLine(box: Json): string[] {
  const mountpoint = envValue(box, 'SKILLS_MOUNT_POINT') ?? entrypointDefault('SKILLS_MOUNT_POINT');
  return [mountpoint, '--config', envValue(box, 'SKILLS_MOUNT_CONFIG') ?? entrypointDefault('SKILLS_MOUNT_CONFIG'), ...((box['args'] as string[] | undefined) ?? [])];
}

function isUnder(child: string, parent: string): boolean {
  return child === parent || child.startsWith(`${parent}/`);
}

describe('the Kubernetes manifests, checked against the schemas', () => {
  it('every manifest in contrib/kubernetes and in the docs is valid, with no field the schema does not have', () => {
    const manifests = [...recipeManifests(), ...docsManifests()];
    const kinds = manifests.map(({ where, doc }) => `${where.split(' ')[0]}: ${String(doc['kind'])}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'contrib/kubernetes/daemonset.yaml: ConfigMap',
        'contrib/kubernetes/daemonset.yaml: Secret',
        'contrib/kubernetes/daemonset.yaml: DaemonSet',
        'contrib/kubernetes/agent-pod.yaml: Pod',
        'contrib/kubernetes/sidecar.yaml: Pod',
        'contrib/kubernetes/snapshot-pod.yaml: Pod',
        'contrib/kubernetes/serve-deployment.yaml: ConfigMap',
        'contrib/kubernetes/serve-deployment.yaml: Deployment',
        'contrib/kubernetes/serve-deployment.yaml: Service',
        'contrib/kubernetes/serve-deployment.yaml: NetworkPolicy',
        'contrib/kubernetes/image-volume-pod.yaml: Pod',
        'docs/agents.md: Pod',
      ]),
    );
    for (const { where, doc } of manifests) expect(manifestProblems(doc), where).toEqual([]);
  });

  it('a misspelt field fails, named by its path: the schemas do not forbid unknown fields, the check does', () => {
    const daemonSet = structuredClone(named('DaemonSet', 'skills-mount'));
    const box = (podSpec(daemonSet)['containers'] as Json[])[0]!;
    const mount = (box['volumeMounts'] as Json[])[0]!;
    mount['mountPropogation'] = mount['mountPropagation'];
    delete mount['mountPropagation'];
    box['imagePullPolicyy'] = 'Always';
    (podSpec(daemonSet)['volumes'] as Json[])[0]!['hostpath'] = { path: '/x' };
    expect(manifestProblems(daemonSet)).toEqual([
      '/spec/template/spec/containers/0/volumeMounts/0/mountPropogation: unknown field',
      '/spec/template/spec/containers/0/imagePullPolicyy: unknown field',
      '/spec/template/spec/volumes/0/hostpath: unknown field',
    ]);
    // Maps (labels, annotations, a ConfigMap's data) take any key.
    const configMap = structuredClone(named('ConfigMap', 'skills-mount-config'));
    (configMap['data'] as Json)['another.json'] = '{}';
    ((configMap['metadata'] as Json)['labels'] as Json)['any/key'] = 'x';
    expect(manifestProblems(configMap)).toEqual([]);
  });

  it('a wrong type, a missing required field or an unknown kind fails', () => {
    const daemonSet = structuredClone(named('DaemonSet', 'skills-mount'));
    const box = (podSpec(daemonSet)['containers'] as Json[])[0]!;
    (box['ports'] as Json[])[0]!['containerPort'] = 'x';
    podSpec(daemonSet)['terminationGracePeriodSeconds'] = 'ten';
    delete box['name'];
    expect(manifestProblems(daemonSet)).toEqual(
      expect.arrayContaining([
        '/spec/template/spec/containers/0/ports/0/containerPort: must be integer',
        '/spec/template/spec/terminationGracePeriodSeconds: must be integer',
        '/spec/template/spec/containers/0: must have required property name',
      ]),
    );
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 'two', selector: {}, template: {} } };
    expect(manifestProblems(deployment)).toEqual(['/spec/replicas: must be integer']);
    expect(manifestProblems({ apiVersion: 'v1', kind: 'Pood', metadata: { name: 'p' } })[0]).toMatch(/^\/: no schema for apiVersion v1 kind Pood/);
    expect(manifestProblems({ apiVersion: 'apps/v1', kind: 'Pod' })[0]).toMatch(/no schema for apiVersion apps\/v1 kind Pod/);
  });
});

describe('what each recipe must get right', () => {
  it('every container runs the one placeholder image', () => {
    const boxes = [...recipeManifests(), ...docsManifests()].filter(({ doc }) => RUNS_PODS.includes(doc['kind'] as string)).flatMap(({ doc }) => containersOf(podSpec(doc)));
    expect(boxes.length).toBeGreaterThan(5);
    for (const box of boxes) expect(box['image'], String(box['name'])).toBe(IMAGE);
  });

  it('the config in the ConfigMap is one skills-mount loads, its token from the Secret through ${env:DOCS_TOKEN}; every file ships the same objects', async () => {
    const manifests = recipeManifests();
    for (const [kind, name] of [['ConfigMap', 'skills-mount-config'], ['Secret', 'skills-mount-tokens']] as const) {
      const copies = manifests.filter(({ doc }) => doc['kind'] === kind && (doc['metadata'] as Json)['name'] === name).map(({ doc }) => doc);
      // Every recipe file that ships configuration ships these, the same.
      expect(copies.length, kind).toBe(new Set(manifests.filter(({ doc }) => doc['kind'] === kind).map(({ where }) => where.split(' ')[0])).size);
      for (const copy of copies) expect(copy).toEqual(copies[0]);
    }
    const configMap = named('ConfigMap', 'skills-mount-config');
    const secret = named('Secret', 'skills-mount-tokens');
    const text = (configMap['data'] as Json)['config.json'] as string;
    expect(text).toContain('"Bearer ${env:DOCS_TOKEN}"');
    const token = (secret['stringData'] as Json)['DOCS_TOKEN'] as string;
    const dir = await temps.make();
    await writeFile(path.join(dir, 'config.json'), text);
    const config = await loadMountConfig({ configPath: path.join(dir, 'config.json'), env: { DOCS_TOKEN: token } });
    expect(config.servers).toEqual([
      expect.objectContaining({ label: 'docs', config: expect.objectContaining({ kind: 'http', headers: { Authorization: `Bearer ${token}` } }) }),
      // The unattended sign-in: the pod's projected service-account token is the jwt-bearer grant.
      expect.objectContaining({ label: 'team', config: expect.objectContaining({ kind: 'http', oauth: expect.objectContaining({ grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertionFile: '/var/run/secrets/mcp/token' }) }) }),
    ]);
    // Every container that runs skills-mount with that config has the identity and a writable sign-in store.
    for (const { where, doc } of manifests.filter(({ doc }) => RUNS_PODS.includes(doc['kind'] as string))) {
      const spec = podSpec(doc);
      for (const box of containersOf(spec).filter((candidate) => ((candidate['volumeMounts'] as Json[] | undefined) ?? []).some((mount) => mount['name'] === 'config'))) {
        const mounts = (box['volumeMounts'] as Json[]).map((mount) => [mount['name'], mount['mountPath']]);
        expect(mounts, `${where} ${String(box['name'])}`).toEqual(expect.arrayContaining([['identity', '/var/run/secrets/mcp'], ['sign-in', '/var/lib/skills-mount-sign-in']]));
        expect(box['env'], `${where} ${String(box['name'])}`).toEqual(expect.arrayContaining([{ name: 'XDG_CONFIG_HOME', value: '/var/lib/skills-mount-sign-in' }]));
      }
      const identity = ((spec['volumes'] as Json[] | undefined) ?? []).find((volume) => volume['name'] === 'identity');
      if (identity) expect(JSON.stringify(identity), where).toContain('"serviceAccountToken":{"path":"token","audience":"https://id.team.example.com"');
    }
    // Every container that gets DOCS_TOKEN gets it from that Secret, never as a literal.
    for (const { doc } of manifests.filter(({ doc }) => RUNS_PODS.includes(doc['kind'] as string))) {
      for (const box of containersOf(podSpec(doc))) {
        const entry = ((box['env'] as Json[] | undefined) ?? []).find((candidate) => candidate['name'] === 'DOCS_TOKEN');
        if (entry) expect(entry, String(box['name'])).toEqual({ name: 'DOCS_TOKEN', valueFrom: { secretKeyRef: { name: 'skills-mount-tokens', key: 'DOCS_TOKEN' } } });
      }
    }
  });

  it('the DaemonSet mounts under a hostPath with Bidirectional propagation, privileged, probed at the --metrics port', () => {
    const spec = podSpec(named('DaemonSet', 'skills-mount'));
    const box = container(spec, 'skills-mount');
    expect(box['securityContext']).toMatchObject({ privileged: true, runAsUser: 0 });
    const command = parseCommandLine(mountCommandLine(box));
    expect(command.command).toBe('mount');
    const options = (command as { options: { mountpoint: string; configPath: string; allowUser: string; metrics: { host: string; port: number } } }).options;
    const skills = volume(spec, 'skills');
    const hostDir = (skills['hostPath'] as Json)['path'] as string;
    const skillsMount = mountOf(box, 'skills');
    expect(skillsMount['mountPropagation']).toBe('Bidirectional');
    expect(path.dirname(options.mountpoint)).toBe(skillsMount['mountPath']);
    expect(hostDir).toBe(skillsMount['mountPath']);
    expect(options.mountpoint).toBe('/var/lib/skills-mount/mnt');
    expect(isUnder(options.configPath, mountOf(box, 'config')['mountPath'] as string)).toBe(true);
    expect(volume(spec, 'config')['configMap']).toEqual({ name: 'skills-mount-config' });
    expect(options.allowUser).toBe('1000');
    expect(options.metrics).toEqual({ host: '0.0.0.0', port: 9464 });
    const port = (box['ports'] as Json[]).find((candidate) => candidate['containerPort'] === options.metrics.port);
    expect(port).toBeDefined();
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      expect((box[probe] as Json)['httpGet'], probe).toEqual({ path: '/healthz', port: port!['name'] });
    }
    expect(volume(spec, 'fuse')['hostPath']).toEqual({ path: '/dev/fuse', type: 'CharDevice' });
    expect(spec['terminationGracePeriodSeconds']).toBeLessThanOrEqual(30);
  });

  it('the agent pod mounts the parent of the daemon\'s mountpoint, HostToContainer and read-only, as the --allow-user uid, unprivileged', () => {
    const daemon = container(podSpec(named('DaemonSet', 'skills-mount')), 'skills-mount');
    const mountpoint = mountCommandLine(daemon)[0]!;
    const allowed = (parseCommandLine(mountCommandLine(daemon)) as { options: { allowUser: string } }).options.allowUser;
    const spec = podSpec(named('Pod', 'agent'));
    const box = container(spec, 'agent');
    const skills = volume(spec, 'skills');
    expect((skills['hostPath'] as Json)['path']).toBe(path.dirname(mountpoint));
    expect(mountOf(box, 'skills')).toMatchObject({ mountPropagation: 'HostToContainer', readOnly: true });
    const security = { ...(spec['securityContext'] as Json), ...(box['securityContext'] as Json) };
    expect(String(security['runAsUser'])).toBe(allowed);
    expect(security).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(security['privileged']).toBeUndefined();
  });

  it('the sidecar pod: a privileged native sidecar mounts into an emptyDir, Bidirectional; the agent reads it HostToContainer, read-only', () => {
    const spec = podSpec(named('Pod', 'agent-with-skills-mount'));
    const sidecar = (spec['initContainers'] as Json[]).find((box) => box['name'] === 'skills-mount')!;
    expect(sidecar['restartPolicy']).toBe('Always');
    expect(sidecar['securityContext']).toMatchObject({ privileged: true });
    expect(volume(spec, 'skills')).toEqual({ name: 'skills', emptyDir: {} });
    const mountpoint = (parseCommandLine(mountCommandLine(sidecar)) as { options: { mountpoint: string } }).options.mountpoint;
    expect(mountOf(sidecar, 'skills')).toMatchObject({ mountPropagation: 'Bidirectional' });
    expect(path.dirname(mountpoint)).toBe(mountOf(sidecar, 'skills')['mountPath']);
    const agent = container(spec, 'agent');
    expect(mountOf(agent, 'skills')).toMatchObject({ mountPath: mountOf(sidecar, 'skills')['mountPath'], mountPropagation: 'HostToContainer', readOnly: true });
    expect(agent['securityContext']).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false });
    expect((sidecar['startupProbe'] as Json)['httpGet']).toMatchObject({ path: '/healthz' });
  });

  it('the snapshot pod: nothing privileged, no hostPath, no /dev/fuse; an init snapshot and a --watch sidecar fill an emptyDir at the parent of DEST, which the agent reads', () => {
    const runsSnapshot = (doc: Json) => doc['kind'] === 'Pod' && containersOf(podSpec(doc)).some((box) => (box['args'] as string[] | undefined)?.[0] === 'snapshot');
    const pods = [...recipeManifests(), ...docsManifests()].filter(({ doc }) => runsSnapshot(doc));
    expect(pods.map(({ where }) => where.split(' ')[0])).toEqual(['contrib/kubernetes/snapshot-pod.yaml', 'docs/agents.md']);
    for (const { where, doc } of pods) {
      const spec = podSpec(doc);
      expect(JSON.stringify(doc), where).not.toMatch(/hostPath|\/dev\/fuse|"privileged"|hostNetwork|hostPID|SYS_ADMIN/);
      expect((spec['securityContext'] as Json)['runAsNonRoot'], where).toBe(true);
      for (const box of containersOf(spec)) {
        expect(box['securityContext'], `${where} ${String(box['name'])}`).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
        expect(Number((box['securityContext'] as Json)['runAsUser'] ?? (spec['securityContext'] as Json)['runAsUser']), `${where} ${String(box['name'])}`).toBeGreaterThan(0);
      }
      const [first, watch] = spec['initContainers'] as Json[];
      const once = parseCommandLine(first!['args'] as string[]) as { command: string; options: { dest: string; watch: boolean; configPath: string } };
      const kept = parseCommandLine(watch!['args'] as string[]) as { command: string; options: { dest: string; watch: boolean } };
      expect([once.command, once.options.watch, kept.command, kept.options.watch], where).toEqual(['snapshot', false, 'snapshot', true]);
      expect(kept.options.dest).toBe(once.options.dest);
      // An emptyDir is 0777: snapshot refuses it as DEST's folder unless told (docs/snapshot.md).
      expect([once, kept].map((command) => (command.options as { allowSharedParent?: boolean }).allowSharedParent), where).toEqual([true, true]);
      expect(watch!['restartPolicy']).toBe('Always');
      expect(first!['restartPolicy']).toBeUndefined();
      // DEST is a symlink into .DEST.snapshots/ beside it: the shared emptyDir is its parent.
      for (const box of [first!, watch!]) {
        const skillsMount = mountOf(box, 'skills');
        expect(path.dirname(once.options.dest)).toBe(skillsMount['mountPath']);
        expect(skillsMount['readOnly']).toBeUndefined();
        expect(isUnder(once.options.configPath, mountOf(box, 'config')['mountPath'] as string)).toBe(true);
        // A cache on a writable volume (the root filesystem is read-only), never inside DEST's parent.
        const cacheHome = envValue(box, 'XDG_CACHE_HOME')!;
        expect(isUnder(cacheHome, mountOf(box, 'cache')['mountPath'] as string)).toBe(true);
        expect(isUnder(cacheHome, skillsMount['mountPath'] as string)).toBe(false);
      }
      expect(volume(spec, 'skills')['emptyDir']).toBeDefined();
      const agent = container(spec, 'agent');
      expect(mountOf(agent, 'skills')).toMatchObject({ mountPath: mountOf(first!, 'skills')['mountPath'], readOnly: true });
      // The agent cannot read the snapshot containers' environment (the token) in the shared pid namespace.
      expect((agent['securityContext'] as Json)['runAsUser']).not.toBe((first!['securityContext'] as Json)['runAsUser']);
    }
  });
});

describe('the serve Deployment (serve-deployment.yaml)', () => {
  const manifests = () => recipeManifests().filter(({ where }) => where.startsWith('contrib/kubernetes/serve-deployment.yaml '));
  const deployment = () => named('Deployment', 'skills-mount-serve', manifests());
  const serveBox = () => container(podSpec(deployment()), 'skills-mount-serve');
  const serveOptions = (): ServeOptions => {
    const command = parseCommandLine(serveBox()['args'] as string[]);
    expect(command.command).toBe('serve');
    return (command as { options: ServeOptions }).options;
  };
  /** Where a container mounts a path: the volumeMount whose mountPath holds it. */
  const mountHolding = (box: Json, file: string): Json | undefined =>
    (box['volumeMounts'] as Json[]).filter((mount) => isUnder(file, mount['mountPath'] as string)).sort((a, b) => String(b['mountPath']).length - String(a['mountPath']).length)[0];

  it('serves the project lock over HTTP on every address, behind --auth-issuer, with the audience the Service gives clients', () => {
    const options = serveOptions();
    const box = serveBox();
    const spec = podSpec(deployment());
    expect(options.view.kind).toBe('project');
    expect(options.http).toEqual({ host: '0.0.0.0', port: 8931 });
    expect(options.unauthenticatedNetwork).toBe(false);
    expect(options.auth?.issuer).toBe('https://id.team.example.com');
    // The lock is in the --project folder, from the ConfigMap, and only the lock is there.
    const projectDir = (options.view as { dir: string }).dir;
    const projectMount = mountHolding(box, path.join(projectDir, 'skills-lock.json'))!;
    expect(projectMount['mountPath']).toBe(projectDir);
    expect(volume(spec, projectMount['name'] as string)['configMap']).toEqual({ name: 'skills-mount-serve', items: [{ key: 'skills-lock.json', path: 'skills-lock.json' }] });
    expect(isUnder(options.servers.configPath!, mountOf(box, 'config')['mountPath'] as string)).toBe(true);
    // The Service: its port and name are the audience's; it sends to the container's MCP port.
    const service = named('Service', 'skills-mount-serve', manifests());
    const servicePort = ((service['spec'] as Json)['ports'] as Json[])[0]!;
    expect(options.auth?.audience).toBe(`http://${String((service['metadata'] as Json)['name'])}:${String(servicePort['port'])}/mcp`);
    const mcpPort = (box['ports'] as Json[]).find((port) => port['name'] === servicePort['targetPort'])!;
    expect(mcpPort['containerPort']).toBe(options.http!.port);
    expect((service['spec'] as Json)['selector']).toEqual(((deployment()['spec'] as Json)['template'] as Json)['metadata'] && ((((deployment()['spec'] as Json)['template'] as Json)['metadata'] as Json)['labels']));
  });

  it('the machine policy is one file at /etc/skills-mount/policy.json (a ConfigMap folder is 0777: a policy in it is not honoured), and with the config it keeps both servers and every locked skill', async () => {
    const box = serveBox();
    const spec = podSpec(deployment());
    const policyMount = mountHolding(box, '/etc/skills-mount/policy.json')!;
    expect(policyMount).toMatchObject({ mountPath: '/etc/skills-mount/policy.json', subPath: 'policy.json', readOnly: true });
    expect(volume(spec, policyMount['name'] as string)['configMap']).toMatchObject({ name: 'skills-mount-serve' });
    // Nothing is mounted at /etc/skills-mount itself: the image's folder (root, 0755) holds the policy.
    expect((box['volumeMounts'] as Json[]).map((mount) => mount['mountPath'])).not.toContain('/etc/skills-mount');

    const data = named('ConfigMap', 'skills-mount-serve', manifests())['data'] as Record<string, string>;
    const dir = await temps.make();
    const configFile = path.join(dir, 'config.json');
    await writeFile(configFile, (named('ConfigMap', 'skills-mount-config', manifests())['data'] as Json)['config.json'] as string);
    await writeFile(path.join(dir, 'policy.json'), data['policy.json']!);
    await writeFile(path.join(dir, 'skills-lock.json'), data['skills-lock.json']!);
    const policy = await loadPolicy({ env: {}, home: dir, machinePath: path.join(dir, 'policy.json'), userPath: path.join(dir, 'no-user-policy.json'), ownerUidOf: () => 0 });
    expect(policy.inForce).toBe(true);
    const lines: string[] = [];
    const config = mountableServers(await loadMountConfig({ configPath: configFile, env: { DOCS_TOKEN: 'x' } }), policy, (line) => lines.push(line), 'not served');
    expect(config.servers.map((server) => server.label)).toEqual(['docs', 'team']);
    expect(lines).toEqual([]);
    const locked = await lockedApprovals(path.join(dir, 'skills-lock.json'), config.servers, policy, 'view');
    expect(locked.problems).toEqual([]);
    expect(locked.approvals?.map((approval) => approval.skillUri)).toEqual(['skill://acme/billing/refunds/SKILL.md', 'skill://hello-mount/SKILL.md']);
  });

  it('health and metrics on the --metrics port: probes at /healthz, Prometheus annotations naming it', () => {
    const options = serveOptions();
    const box = serveBox();
    expect(options.metrics).toEqual({ host: '0.0.0.0', port: 9464 });
    const port = (box['ports'] as Json[]).find((candidate) => candidate['containerPort'] === options.metrics!.port)!;
    expect(port).toBeDefined();
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) expect((box[probe] as Json)['httpGet'], probe).toEqual({ path: '/healthz', port: port['name'] });
    const annotations = (((deployment()['spec'] as Json)['template'] as Json)['metadata'] as Json)['annotations'];
    expect(annotations).toEqual({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(options.metrics!.port), 'prometheus.io/path': '/metrics' });
  });

  it('runs with no privilege: non-root, read-only root filesystem, the disk cache and the kept texts on emptyDirs, resources requested', () => {
    const spec = podSpec(deployment());
    const box = serveBox();
    expect(JSON.stringify(deployment())).not.toMatch(/hostPath|\/dev\/fuse|"privileged"|hostNetwork|hostPID|SYS_ADMIN/);
    expect(spec['securityContext']).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(box['securityContext']).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(Number((box['securityContext'] as Json)['runAsUser'])).toBeGreaterThan(0);
    expect(serveOptions().diskCache).toBeDefined();
    for (const variable of ['XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_CONFIG_HOME']) {
      const mount = mountHolding(box, envValue(box, variable)!)!;
      expect(volume(spec, mount['name'] as string)['emptyDir'], variable).toBeDefined();
    }
    expect((box['resources'] as Json)['requests']).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect((deployment()['spec'] as Json)['replicas']).toBeGreaterThan(1);
  });

  it('the NetworkPolicy selects the gateway\'s pods and names its two ports', () => {
    const policy = named('NetworkPolicy', 'skills-mount-serve', manifests())['spec'] as Json;
    const labels = (((deployment()['spec'] as Json)['template'] as Json)['metadata'] as Json)['labels'];
    expect((policy['podSelector'] as Json)['matchLabels']).toEqual(labels);
    const named_ = (serveBox()['ports'] as Json[]).map((port) => port['name']);
    const ports = (policy['ingress'] as Json[]).flatMap((rule) => (rule['ports'] as Json[]).map((port) => port['port']));
    expect(ports.sort()).toEqual([...named_].sort());
  });
});

describe('the image volume pod', () => {
  it('mounts the skills image by digest, IfNotPresent, read-only at the harness root the agent reads; nothing privileged, no hostPath, no skills-mount', () => {
    const doc = named('Pod', 'agent-with-skills-image');
    const spec = podSpec(doc);
    expect(JSON.stringify(doc)).not.toMatch(/hostPath|\/dev\/fuse|"privileged"|SYS_ADMIN/);
    const skills = volume(spec, 'skills')['image'] as Json;
    expect(skills['reference']).toMatch(/^[\w.-]+(?::\d+)?\/[\w./-]+@sha256:[0-9a-f]{64}$/);
    expect(skills['pullPolicy']).toBe('IfNotPresent');
    const box = container(spec, 'agent');
    const home = ((box['env'] as Json[]).find((entry) => entry['name'] === 'HOME') as Json)['value'] as string;
    // The layer of snapshot --oci --for claude-code is Claude Code's user skills root.
    expect(mountOf(box, 'skills')).toMatchObject({ mountPath: path.join(home, '.claude', 'skills'), readOnly: true });
    expect(containersOf(spec).every((candidate) => !JSON.stringify(candidate['args'] ?? []).includes('skills-mount'))).toBe(true);
  });
});

describe('the container image', () => {
  const dockerfile = readFileSync(DOCKERFILE, 'utf8');
  // Continuation lines joined, comments dropped: one instruction per line.
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages = instructions.reduce<string[][]>((all, line) => (/^FROM\s/i.test(line) ? [...all, [line]] : (all.at(-1)?.push(line), all)), []);

  it('its ENTRYPOINT runs contrib/container/entrypoint.sh where the Dockerfile installs it, under tini', () => {
    const runtime = stages.at(-1)!;
    const copy = runtime.find((line) => /^COPY\s.*contrib\/container\/entrypoint\.sh\s/.test(line));
    expect(copy).toBeDefined();
    const installed = copy!.split(/\s+/).at(-1)!;
    const entrypoint = runtime.filter((line) => line.startsWith('ENTRYPOINT')).at(-1)!;
    expect(JSON.parse(entrypoint.slice('ENTRYPOINT'.length))).toEqual(['/usr/bin/tini', '--', installed]);
    expect(copy).toMatch(/--chmod=0755/);
  });

  it('builds the addon (a failed build is fatal) and the code, on Node 24; the runtime stage has fusermount3 and no compilers', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
    expect(stages.map((stage) => stage[0])).toEqual(['FROM ${NODE_IMAGE} AS build', 'FROM ${NODE_IMAGE}']);
    const [build, runtime] = stages as [string[], string[]];
    expect(build.join('\n')).toMatch(/apt-get install .*\bfuse3 libfuse3-dev pkg-config python3 make g\+\+/);
    expect(build).toContain('RUN npm ci && SKILLS_FUSE_REQUIRED=1 scripts/build-native.sh');
    expect(build).toContain('RUN npm run build && npm prune --omit=dev');
    const runtimeText = runtime.join('\n');
    expect(runtimeText).toMatch(/apt-get install .*\bfuse3\b/);
    expect(runtimeText).not.toMatch(/g\+\+|\bmake\b|libfuse3-dev|python3|pkg-config/);
    expect(runtimeText).toContain('COPY --from=build /opt/skills-mount/native/build/Release/skills_fuse.node native/build/Release/');
    // A numeric user, so that Kubernetes' runAsNonRoot can check it.
    expect(runtime.filter((line) => line.startsWith('USER')).at(-1)).toMatch(/^USER [1-9][0-9]*:[0-9]+$/);
  });

  it('copies from the build context only paths that exist in the repository (the context is the repository root)', () => {
    const copies = instructions.filter((line) => /^COPY\s/.test(line) && !/--from=/.test(line));
    expect(copies.length).toBeGreaterThan(3);
    for (const line of copies) {
      const words = line.split(/\s+/).slice(1).filter((word) => !word.startsWith('--'));
      for (const source of words.slice(0, -1)) expect(existsSync(path.join(ROOT, source)), source).toBe(true);
    }
  });
});

describe('the entrypoint', () => {
  it('is an executable POSIX sh script that sh -n accepts, with set -eu', () => {
    expect(statSync(ENTRYPOINT).mode & 0o111).toBe(0o111);
    const text = readFileSync(ENTRYPOINT, 'utf8');
    expect(text.split('\n')[0]).toBe('#!/bin/sh');
    expect(text).toMatch(/^set -eu$/m);
    const check = spawnSync('sh', ['-n', ENTRYPOINT], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('mounts: MOUNTPOINT --config FILE, then the arguments it was given; creates the mountpoint; execs (skills-mount gets its pid, and SIGTERM)', async () => {
    const dir = await temps.make();
    const mountpoint = path.join(dir, 'var', 'lib', 'mnt');
    const run = await runEntrypoint(dir, ['--allow-user', '1000', '--metrics', '0.0.0.0:9464'], { SKILLS_MOUNT_POINT: mountpoint, SKILLS_MOUNT_CONFIG: '/etc/x/config.json' });
    expect(run.argv).toEqual([mountpoint, '--config', '/etc/x/config.json', '--allow-user', '1000', '--metrics', '0.0.0.0:9464']);
    expect(run.ranAsPid).toBe(run.pid);
    expect((await stat(mountpoint)).isDirectory()).toBe(true);
    const defaults = await runEntrypoint(dir, [], { SKILLS_MOUNT_POINT: mountpoint });
    expect(defaults.argv).toEqual([mountpoint, '--config', '/etc/skills-mount/config.json']);
    expect(entrypointDefault('SKILLS_MOUNT_POINT')).toBe('/var/lib/skills-mount/mnt');
  });

  it('leaves a mountpoint it cannot create to skills-mount (a stale mount fails mkdir -p; skills-mount recovers it)', async () => {
    const dir = await temps.make();
    await writeFile(path.join(dir, 'file'), '');
    const mountpoint = path.join(dir, 'file', 'mnt');
    const run = await runEntrypoint(dir, [], { SKILLS_MOUNT_POINT: mountpoint, SKILLS_MOUNT_CONFIG: '/c.json' });
    expect(run).toMatchObject({ code: 0, stderr: '', argv: [mountpoint, '--config', '/c.json'] });
  });

  it('runs a command as given: no mountpoint, no --config added, nothing created', async () => {
    const dir = await temps.make();
    const mountpoint = path.join(dir, 'mnt');
    for (const argv of [
      ['snapshot', '/skills/current', '--config', '/etc/skills-mount/config.json', '--watch'],
      ['serve', '--http', '0.0.0.0:8931', '--project', '/etc/skills-mount/project', '--auth-issuer', 'https://id.example.com'],
      ['verify', '/skills/current', '--json'],
      ['status', '--json'],
      ['unmount', '/var/lib/skills-mount/mnt'],
      ['cache', 'status'],
      ['approve', '/var/lib/skills-mount/mnt/docs/guide', '--yes'],
      ['revoke', '--label', 'docs', '--uri', 'skill://guide/SKILL.md'],
      ['approvals'],
      ['--help'],
      ['--version'],
    ]) {
      const run = await runEntrypoint(dir, argv, { SKILLS_MOUNT_POINT: mountpoint });
      expect(run.argv, argv[0]).toEqual(argv);
      expect(run.ranAsPid).toBe(run.pid);
    }
    expect(existsSync(mountpoint)).toBe(false);
  });

  it('splits SKILLS_MOUNT_BIN into words but expands no file names in it; arguments pass whole', async () => {
    const dir = await temps.make();
    await mkdir(path.join(dir, 'some-file'));
    const run = await runEntrypoint(dir, ['snapshot', 'out', '--server', 'docs=npx -y docs *'], {}, ['--first', '*']);
    expect(run.argv).toEqual(['--first', '*', 'snapshot', 'out', '--server', 'docs=npx -y docs *']);
  });
});

/**
 * Runs the entrypoint in `dir` with SKILLS_MOUNT_BIN a fake skills-mount (plus `binWords`)
 * that prints its pid and argv; resolves the spawned pid, what the fake saw and the exit.
 */
async function runEntrypoint(dir: string, args: string[], env: Record<string, string>, binWords: string[] = []): Promise<{ pid: number; ranAsPid: number; argv: string[]; code: number | null; stderr: string }> {
  const fake = path.join(dir, 'fake-skills-mount');
  await writeFile(fake, '#!/bin/sh\nprintf "pid %s\\n" "$$"\nfor arg in "$@"; do printf "arg %s\\n" "$arg"; done\n', { mode: 0o755 });
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, SKILLS_MOUNT_BIN: ['sh', fake, ...binWords].join(' ') };
  if (!('SKILLS_MOUNT_POINT' in env)) delete childEnv['SKILLS_MOUNT_POINT'];
  if (!('SKILLS_MOUNT_CONFIG' in env)) delete childEnv['SKILLS_MOUNT_CONFIG'];
  const child = spawn(ENTRYPOINT, args, { cwd: dir, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const lines = stdout.split('\n').filter((line) => line !== '');
  return {
    pid: child.pid!,
    ranAsPid: Number(lines.find((line) => line.startsWith('pid '))?.slice(4)),
    argv: lines.filter((line) => line.startsWith('arg ')).map((line) => line.slice(4)),
    code,
    stderr,
  };
}
