// Runs a parsed Jinja template with the globals real chat templates call (raise_exception,
// strftime_now, range, Python's True/False/None). @huggingface/jinja's own Template.render
// declares these itself and refuses redeclaration, so we build the environment here.
import { Environment, Interpreter, type Template } from '@huggingface/jinja';

/** Thrown by the template's own raise_exception(...): the input broke a rule of the model's format. */
export class TemplateRaisedError extends Error {
  override readonly name = 'TemplateRaisedError';
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September',
  'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Python's strftime for the directives chat templates use, English names whatever the host locale. */
export function strftime(date: Date, format: string): string {
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return format.replace(/%([a-zA-Z%])/g, (whole, d: string) => {
    switch (d) {
      case 'Y': return String(date.getFullYear());
      case 'y': return pad(date.getFullYear() % 100);
      case 'm': return pad(date.getMonth() + 1);
      case 'd': return pad(date.getDate());
      case 'e': return String(date.getDate()).padStart(2, ' ');
      case 'B': return MONTHS[date.getMonth()]!;
      case 'b': case 'h': return MONTHS[date.getMonth()]!.slice(0, 3);
      case 'A': return DAYS[date.getDay()]!;
      case 'a': return DAYS[date.getDay()]!.slice(0, 3);
      case 'H': return pad(date.getHours());
      case 'I': return pad(((date.getHours() + 11) % 12) + 1);
      case 'p': return date.getHours() < 12 ? 'AM' : 'PM';
      case 'M': return pad(date.getMinutes());
      case 'S': return pad(date.getSeconds());
      case 'j': {
        const start = new Date(date.getFullYear(), 0, 1);
        return pad(Math.floor((date.getTime() - start.getTime()) / 86_400_000) + 1, 3);
      }
      case '%': return '%';
      default: return whole;
    }
  });
}

function range(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) { stop = start; start = 0; }
  if (step === 0) throw new Error('range() step must not be zero');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

/** Renders `template` with `context` (plain JSON-like values; undefined keys must be left out by the caller). */
export function runTemplate(template: Template, context: Record<string, unknown>, now: () => Date): string {
  const env = new Environment();
  env.set('false', false);
  env.set('true', true);
  env.set('none', null);
  env.set('False', false);
  env.set('True', true);
  env.set('None', null);
  env.set('range', range);
  env.set('raise_exception', (message: unknown) => {
    throw new TemplateRaisedError(typeof message === 'string' ? message : String(message));
  });
  env.set('strftime_now', (format: unknown) => strftime(now(), String(format)));
  for (const [key, value] of Object.entries(context)) {
    if (value !== undefined) env.set(key, value);
  }
  const result = new Interpreter(env).run(template.parsed);
  return String(result.value);
}
