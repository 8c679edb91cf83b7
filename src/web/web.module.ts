import { defineModule } from '../modules/module';
import { WebSession } from './web-session.entity';

/** The web app's sessions. */
export const webModule = defineModule({ name: 'web', entities: [WebSession] });
