// Sign-in interop with Glewlwyd (Debian's package, unpacked by scripts/idp-interop.sh without its
// maintainer scripts; a SQLite database and config of the test's own, its OpenID Connect plugin
// created through its admin API: test/support/idp-glewlwyd.ts) in front of `skills-serve
// --auth-issuer`, through a real kernel mount: the scenario of test/support/idp-scenario.ts, with
// skills-mount registered dynamically (a public client), then as a confidential client registered
// beforehand (the kind of client Glewlwyd lets revoke). Not installed: skipped locally, a failure
// by name in CI.
import { glewlwydUnavailable, startGlewlwyd } from '../support/idp-glewlwyd.js';
import { describeInterop } from '../support/idp-scenario.js';

// Glewlwyd counts lifetimes in whole seconds and the mount renews past half of one: 4 s leaves room.
const accessTokenTtlS = 4;

describeInterop({
  name: 'Glewlwyd (dynamic registration)',
  unavailable: glewlwydUnavailable,
  start: (request) => startGlewlwyd(request, 'dynamic'),
  registersClients: true,
  accessTokenTtlS,
  cannotRevokeBecause: 'Glewlwyd 2.7 revokes only for a client authenticating with HTTP Basic (a confidential one) or a bearer token; a dynamically registered public client has neither',
});

describeInterop({
  name: 'Glewlwyd (a confidential client registered beforehand)',
  unavailable: glewlwydUnavailable,
  start: (request) => startGlewlwyd(request, 'confidential'),
  registersClients: false,
  accessTokenTtlS,
});
