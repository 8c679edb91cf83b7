import { defineModule } from '../modules/module';
import { SignInChallenge } from './sign-in-challenge.entity';
import { SsoAttempt } from './sso-attempt.entity';
import { WebSession } from './web-session.entity';

/** The web app's sessions, sign-ins waiting for their second step, and single sign-ons under way. */
export const webModule = defineModule({ name: 'web', entities: [WebSession, SignInChallenge, SsoAttempt] });
