// Checks a route makes against the served model before it books a request.
import { apiError } from '../validation/errors.js';
import type { ModelView } from '../served-model/model-view.js';

/** Text routes on an embedding model are a 400 that says what the model does. */
export function requireTextModel(model: ModelView): void {
  if (model.info.embedding) {
    throw apiError('model_not_text', `the model '${model.id}' is an embedding model (pooling ${model.info.embedding.pooling}): it answers /v1/embeddings, not text requests`, { param: 'model' });
  }
}

/** n choices hold n slots at once: more than one engine has is a 400. */
export function checkChoices(n: number, model: ModelView): void {
  if (n > model.info.slots) {
    throw apiError('invalid_value', `n: at most ${model.info.slots} choices (each needs one of the server's ${model.info.slots} slots, --slots), got ${n}`, { param: 'n' });
  }
}
