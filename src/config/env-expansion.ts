// Expands variable references in config strings: ${VAR}, ${VAR:-default}, ${env:VAR},
// VS Code's ${input:ID}, ${userHome} and ${workspaceFolder}. A reference with no value
// is an error naming it, never an empty string passed silently to a server.
import { ConfigError } from '../errors.js';

export interface ExpansionContext {
  env: NodeJS.ProcessEnv;
  userHome: string;
  /** VS Code's ${workspaceFolder}: see workspaceFolderFor in config.ts. */
  workspaceFolder: string;
  /** VS Code `inputs` by id, with the description shown in errors. */
  inputs: ReadonlyMap<string, { description: string | undefined }>;
}

const REFERENCE = /\$\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The environment variable that answers VS Code's `${input:ID}`: SKILLS_MOUNT_INPUT_ + ID in upper snake case. */
export function inputVariableName(id: string): string {
  return `SKILLS_MOUNT_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')}`;
}

/** `text` with every reference replaced; throws ConfigError "<where>: ..." for the first one without a value. */
export function expandVariables(text: string, context: ExpansionContext, where: string): string {
  return text.replace(REFERENCE, (whole, body: string) => {
    const value = resolve(body.trim(), context);
    if (typeof value === 'string') return value;
    throw new ConfigError(`${where}: ${whole} ${value.problem}`);
  });
}

function resolve(body: string, context: ExpansionContext): string | { problem: string } {
  const colon = body.indexOf(':');
  const prefix = colon === -1 ? '' : body.slice(0, colon);
  const rest = colon === -1 ? body : body.slice(colon + 1);
  if (prefix === 'env') return fromEnvironment(rest, context);
  if (prefix === 'input') {
    const input = context.inputs.get(rest);
    const variable = inputVariableName(rest);
    const value = context.env[variable];
    if (value !== undefined) return value;
    const described = input?.description ? ` ("${input.description}")` : '';
    const declared = input ? '' : ' (and no input with this id is declared in "inputs")';
    return { problem: `asks for input "${rest}"${described}${declared}: skills-mount never prompts; set the environment variable ${variable}` };
  }
  if (body === 'userHome') return context.userHome;
  if (body === 'workspaceFolder') return context.workspaceFolder;
  if (body === 'pathSeparator' || body === '/') return '/';
  const fallback = /^([A-Za-z_][A-Za-z0-9_]*):-(.*)$/s.exec(body);
  if (fallback) {
    const value = context.env[fallback[1]!];
    return value === undefined || value === '' ? fallback[2]! : value;
  }
  if (VARIABLE_NAME.test(body)) return fromEnvironment(body, context);
  return {
    problem: 'is not a variable skills-mount understands (it expands ${VAR}, ${VAR:-default}, ${env:VAR}, ${input:ID}, ${userHome}, ${workspaceFolder})',
  };
}

function fromEnvironment(name: string, context: ExpansionContext): string | { problem: string } {
  if (!VARIABLE_NAME.test(name)) return { problem: `names no valid environment variable` };
  const value = context.env[name];
  return value === undefined ? { problem: `is not set: set the environment variable ${name}` } : value;
}
