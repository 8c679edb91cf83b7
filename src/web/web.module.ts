import { defineModule } from '../modules/module';
import { SignInChallenge } from './sign-in-challenge.entity';
import { WebSession } from './web-session.entity';

/** The web app's sessions, and sign-ins waiting for their second step. */
export const webModule = defineModule({ name: 'web', entities: [WebSession, SignInChallenge] });
