import { defineModule } from '../module';
import { RecoveryCode } from './recovery-code.entity';

/** Two-step sign-in (issue 67): a person's TOTP app and recovery codes; the web app asks for them (src/web/two-factor.router.ts). */
export const twoFactorModule = defineModule({ name: 'two-factor', entities: [RecoveryCode] });
