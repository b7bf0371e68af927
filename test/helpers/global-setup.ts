// Builds the bundles once before the tests (the engine host runs as a child process from dist/).
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/bundle.mjs'], { stdio: 'inherit' });
}
