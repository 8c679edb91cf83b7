import { Entity, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { User } from '../accounts/user.entity';

/**
 * One recovery code of a person's two-step sign-in, for when the app is lost: only its SHA-256 is
 * kept (a code has 80 random bits, so a hash cannot be walked back), and it is deleted as it is used.
 */
@Entity({ tableName: 'recovery_codes' })
@Index({ name: 'recovery_codes_user', properties: ['user'] })
export class RecoveryCode {
  @PrimaryKey({ type: 'text' })
  codeHash!: string;

  @ManyToOne(() => User, { ref: true, deleteRule: 'cascade', index: false })
  user!: Ref<User>;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();
}
