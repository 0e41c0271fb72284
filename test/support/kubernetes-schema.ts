// Checks a Kubernetes manifest against the OpenAPI schemas kubernetes-models ships, strictly:
// wrong types, missing required fields and bad enum values (the models' own validate()), and
// every field the schema does not know (which validate() accepts: the schemas do not forbid
// additional properties). Knows nothing of skills-mount.
import { DaemonSet, Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ConfigMap, Namespace, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';

interface ModelClass {
  new (data: never): { validate(): void; toJSON(): unknown };
}

/** apiVersion/kind -> the model that validates it; anything else is reported, not skipped. */
const MODELS: ReadonlyMap<string, ModelClass> = new Map<string, ModelClass>([
  ['v1/ConfigMap', ConfigMap],
  ['v1/Namespace', Namespace],
  ['v1/Pod', Pod],
  ['v1/Secret', Secret],
  ['v1/Service', Service],
  ['v1/ServiceAccount', ServiceAccount],
  ['apps/v1/DaemonSet', DaemonSet],
  ['apps/v1/Deployment', Deployment],
  ['batch/v1/Job', Job],
  ['networking.k8s.io/v1/NetworkPolicy', NetworkPolicy],
]);

/**
 * What is wrong with `manifest`, one line each, with its JSON-pointer path
 * ("/spec/containers/0/imagePullPolicyy: unknown field"); empty when it is valid.
 */
export function manifestProblems(manifest: unknown): string[] {
  if (!isObject(manifest)) return ['/: not an object'];
  const key = `${String(manifest['apiVersion'])}/${String(manifest['kind'])}`;
  const Model = MODELS.get(key);
  if (Model === undefined) return [`/: no schema for apiVersion ${String(manifest['apiVersion'])} kind ${String(manifest['kind'])} (known: ${[...MODELS.keys()].join(', ')})`];
  const model = new Model(manifest as never);
  const document = model.toJSON();
  // The generated validators read every property their schema declares, on every object they
  // check, and every key of a map (additionalProperties): a key never read is one the schema
  // does not have. So the validator runs on a proxy that records each read.
  const reads = new WeakMap<object, Set<string>>();
  const problems: string[] = [];
  try {
    model.validate.call(observed(document, reads, new WeakMap()));
  } catch (error) {
    const errors = (error as { errors?: { instancePath: string; message?: string }[] }).errors;
    if (!Array.isArray(errors)) throw error;
    for (const { instancePath, message } of errors) problems.push(`${instancePath || '/'}: ${message ?? 'invalid'}`);
  }
  collectUnknown(document, '', reads, problems);
  return problems;
}

function observed<T>(value: T, reads: WeakMap<object, Set<string>>, proxies: WeakMap<object, object>): T {
  if (value === null || typeof value !== 'object') return value;
  const target = value as object;
  const known = proxies.get(target);
  if (known) return known as T;
  const read = new Set<string>();
  reads.set(target, read);
  const proxy = new Proxy(target, {
    get(object, property, receiver) {
      if (typeof property === 'string') read.add(property);
      return observed(Reflect.get(object, property, receiver), reads, proxies);
    },
  });
  proxies.set(target, proxy);
  return proxy as T;
}

function collectUnknown(value: unknown, at: string, reads: WeakMap<object, Set<string>>, problems: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => collectUnknown(item, `${at}/${index}`, reads, problems));
    return;
  }
  if (!isObject(value)) return;
  const read = reads.get(value);
  for (const [key, child] of Object.entries(value)) {
    const path = `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (read === undefined || !read.has(key)) problems.push(`${path}: unknown field`);
    else collectUnknown(child, path, reads, problems);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
