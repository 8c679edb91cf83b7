import { defineModule } from '../module';
import { AccountEmailToken } from './account-email-token.entity';
import { Account } from './account.entity';
import { ApiKey } from './api-key.entity';
import { User } from './user.entity';

/** Accounts and their keys: managed by the web app and the command line, not through /v1. */
export const accountsModule = defineModule({
  name: 'accounts',
  entities: [Account, ApiKey, AccountEmailToken, User],
  conflicts: {
    accounts_email_unique: { param: 'email', message: 'An account with this email already exists' },
    users_email_unique: { param: 'email', message: 'A person with this email already exists' },
  },
});
