/**
 * In milliseconds; 0 sets none (pg sends no startup parameter for 0), so PostgreSQL's own setting
 * applies: off, unless the database or role sets one.
 */
export interface DatabaseTimeouts {
  statementMs: number;
  idleInTransactionMs: number;
}
