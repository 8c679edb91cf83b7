/**
 * How a completion fails, as classes a caller can tell apart: an engine moves the integration to
 * `error` on LlmAuthError, may try later on LlmUnavailable or LlmTimeout, and records the usage an
 * answer it could not use still cost (LlmMalformedOutput, LlmModelRefusal). Messages never hold a
 * credential or the prompt.
 */
export abstract class LlmError extends Error {
  override readonly name: string = this.constructor.name;
}

/** 401 or 403: the key is wrong, revoked, or not allowed this model or deployment. */
export class LlmAuthError extends LlmError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** 429, 5xx or no answer, still so after the retries (or with a Retry-After too long to wait). */
export class LlmUnavailable extends LlmError {
  constructor(
    message: string,
    readonly status?: number,
    /** The provider's Retry-After, in milliseconds, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** No answer within the deadline of a request. */
export class LlmTimeout extends LlmError {}

/** Another 4xx: a model the key cannot use, a deployment that does not exist, a schema the provider refuses. */
export class LlmRequestRejected extends LlmError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The tokens an unusable answer cost. */
interface SpentUsage {
  prompt_tokens: number;
  completion_tokens: number;
  model: string;
}

/** The model answered, but not JSON that fits the schema. */
export class LlmMalformedOutput extends LlmError {
  constructor(
    message: string,
    readonly usage: SpentUsage,
  ) {
    super(message);
  }
}

/** The model declined to answer (the message's `refusal`). */
export class LlmModelRefusal extends LlmError {
  constructor(
    message: string,
    readonly usage: SpentUsage,
  ) {
    super(message);
  }
}
