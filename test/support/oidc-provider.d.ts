// The part of oidc-provider's API (v9, which ships no types) that test/support/oidc-server.ts
// uses, typed for the tests only.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type AdapterPayload = Record<string, unknown> & { grantId?: string; accountId?: string; uid?: string; userCode?: string; consumed?: number };

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresInS: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export type ClientMetadata = Record<string, unknown> & { client_id: string };

  export interface OidcClient {
    clientId: string;
    grantTypeAllowed(grantType: string): boolean;
  }

  export interface KoaContextWithOIDC {
    oidc: { params?: Record<string, unknown>; client?: OidcClient };
  }

  interface TokenModel {
    revokeByGrantId(grantId: string): Promise<void>;
  }

  interface FoundToken {
    grantId?: string;
    destroy(): Promise<void>;
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: never[]) => void): this;
    readonly Client: new (...args: unknown[]) => OidcClient;
    readonly AccessToken: TokenModel;
    readonly AuthorizationCode: TokenModel;
    readonly RefreshToken: TokenModel & { find(value: string, options?: { ignoreExpiration?: boolean }): Promise<FoundToken | undefined> };
    readonly Grant: { find(id: string): Promise<FoundToken | undefined> };
  }

  export const errors: { InvalidTarget: new (description?: string) => Error };
  export default Provider;
}
