/** How much of one instance an account and mode may hold at once, while it is alone on the instance and while others are active too. */
export interface AccountGateBounds {
  /** Requests running at once while the account is the only one active (ACCOUNT_CONCURRENCY). */
  requests: number;
  /** Requests running at once while other accounts are active (ACCOUNT_SHARED_CONCURRENCY). */
  sharedRequests: number;
  /** Requests waiting behind the running ones, in arrival order; past that, 429 at once (ACCOUNT_QUEUE). */
  waiting: number;
  /** Root fields (a REST route's operation, each top-level field of a GraphQL document: where the database work is) running at once while alone: the database pool's size. */
  rootFields: number;
  /** Root fields running at once while other accounts are active (ACCOUNT_SHARED_ROOT_FIELDS). */
  sharedRootFields: number;
  /** The share of wall-clock time an account's root fields may run while other accounts are active (ACCOUNT_SHARED_TIME, 0 to 1). */
  sharedTime: number;
}

export const DEFAULT_ACCOUNT_GATE_BOUNDS: AccountGateBounds = {
  requests: 32,
  sharedRequests: 2,
  waiting: 128,
  rootFields: 10,
  sharedRootFields: 1,
  sharedTime: 0.5,
};
