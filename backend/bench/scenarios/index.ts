// The scenarios by name, in the order they run.
import type { Scenario } from '../types.js';
import type { ScenarioName } from '../../../contract/bench.js';
import { concurrent } from './concurrent.js';
import { conversations } from './conversations.js';
import { edit } from './edit.js';
import { infillScenario } from './infill.js';
import { mixed } from './mixed.js';
import { nextedit } from './nextedit.js';
import { prefill } from './prefill.js';
import { repeat } from './repeat.js';
import { session } from './session.js';
import { side } from './side.js';
import { single } from './single.js';
import { typing } from './typing.js';

export const scenarios: Record<ScenarioName, Scenario> = {
  single, prefill, concurrent, repeat, mixed, side, infill: infillScenario, typing, session, conversations, edit, nextedit,
};
