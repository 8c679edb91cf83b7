import { EventEmitter } from 'node:events';
import { ChangeSetType, EventSubscriber, FlushEventArgs } from '@mikro-orm/core';
import { Event } from './event.entity';

/** Emits 'written' after a flush that wrote events, so dispatchers in this process look at once instead of at their next poll. */
export const outboxSignal = new EventEmitter().setMaxListeners(100);

/**
 * Renders the payload of each event being inserted while its flush runs. MikroORM has by then
 * applied `onUpdate` (so `updated_at` is final) but not yet opened the flush's transaction, which
 * then writes the events together with the changes they describe: both commit, or neither does.
 */
export class OutboxSubscriber implements EventSubscriber {
  onFlush({ uow }: FlushEventArgs): void {
    for (const changeSet of uow.getChangeSets()) {
      if (changeSet.type !== ChangeSetType.CREATE || !(changeSet.entity instanceof Event)) continue;
      const event = changeSet.entity;
      if (!event.render) continue;
      event.data = event.render();
      delete event.render;
      uow.recomputeSingleChangeSet(event);
    }
  }

  afterFlush({ uow }: FlushEventArgs): void {
    if (uow.getChangeSets().some((cs) => cs.entity instanceof Event)) outboxSignal.emit('written');
  }
}
