import { defineModule } from '../modules/module';
import { IdempotencyKey } from './idempotency-key.entity';

/** Stored answers of POSTs sent with an Idempotency-Key (CONTRACT §12). */
export const idempotencyModule = defineModule({ name: 'idempotency', entities: [IdempotencyKey] });
