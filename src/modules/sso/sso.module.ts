import { defineModule } from '../module';
import { SsoConnection, SsoDomain } from './sso-connection.entity';

/** Single sign-on (issue 67): an account's OpenID Connect issuer and the domains it covers; the web app signs people in through it (src/web/sso.router.ts). */
export const ssoModule = defineModule({ name: 'sso', entities: [SsoConnection, SsoDomain] });
