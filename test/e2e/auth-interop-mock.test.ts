// Sign-in interop with oauth2-mock-server (npm; OpenID discovery only, a pre-registered client,
// tokens shaped by its hooks: test/support/idp-mock-server.ts) in front of `skills-serve
// --auth-issuer`, through a real kernel mount: the scenario of test/support/idp-scenario.ts.
import { describeInterop } from '../support/idp-scenario.js';
import { startMockServer } from '../support/idp-mock-server.js';

describeInterop({
  name: 'oauth2-mock-server',
  // A devDependency: missing only when npm ci was not run (the import above fails first then).
  unavailable: () => undefined,
  start: startMockServer,
  registersClients: false,
});
