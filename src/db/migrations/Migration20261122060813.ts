import { Migration } from '@mikro-orm/migrations';

export class Migration20261122060813 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "lead_models" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "version" int not null, "params" jsonb not null, "training_size" int not null, "holdout_size" int not null, "won" int not null, "lost" int not null, "auc" double precision null, "prior_auc" double precision null, "calibration" jsonb not null, constraint "lead_models_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "lead_models" add constraint "lead_models_version_unique" unique ("account_id", "livemode", "version");`);

    this.addSql(
      `alter table "lead_models" add constraint "lead_models_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "lead_models" cascade;`);
  }
}
