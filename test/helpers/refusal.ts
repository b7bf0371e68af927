// What a validator's refusal says: `400 [param] message`, for tests that pin a 400's field and words.
import { ApiError } from '../../backend/validation/errors.js';

export function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return `${e.status} [${e.param}] ${e.message}`;
    throw e;
  }
  throw new Error('expected an ApiError');
}
