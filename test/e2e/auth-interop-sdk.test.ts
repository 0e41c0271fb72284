// Sign-in interop with the MCP SDK's example OAuth server (its mcpAuthRouter over the example's
// DemoInMemoryAuthProvider, issuing JWTs for the resource: test/support/idp-sdk-server.ts) in
// front of `skills-serve --auth-issuer`, through a real kernel mount: the scenario of
// test/support/idp-scenario.ts. Dynamic registration, and redirect URIs matched exactly.
import { createRequire } from 'node:module';
import { describeInterop } from '../support/idp-scenario.js';
import { SDK_EXAMPLE_PROVIDER, startSdkServer } from '../support/idp-sdk-server.js';

describeInterop({
  name: "the MCP SDK's example OAuth server",
  unavailable: () => {
    try {
      createRequire(import.meta.url).resolve(SDK_EXAMPLE_PROVIDER);
      return undefined;
    } catch {
      return `${SDK_EXAMPLE_PROVIDER} is not in node_modules (it comes with @modelcontextprotocol/conformance: run npm ci)`;
    }
  },
  start: startSdkServer,
  registersClients: true,
});
