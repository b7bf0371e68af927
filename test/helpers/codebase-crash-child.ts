// Child process for the store's crash test: commits one file, then starts a transaction that
// writes another, says "mid" on stdout and waits there to be killed (SIGKILL: no cleanup runs).
import { IndexStore } from '../../extension/codebase/store.js';

const [path] = process.argv.slice(2);
const store = IndexStore.open(path!);
store.transaction(() => store.putFile({ path: 'a.ts', size: 1, mtimeMs: 1, hash: 'ha' }, [
  { startLine: 1, endLine: 1, text: 'committed alpha text', hash: 'c1', kind: 'window' },
]));
store.putVectors([{ hash: 'c1', vector: new Float32Array([1, 0]) }]);
// By hand (transaction() would commit): begin, write half, wait to be killed.
(store as unknown as { db: { exec(sql: string): void } }).db.exec('BEGIN IMMEDIATE');
for (let i = 0; i < 200; i++) {
  store.putFile({ path: `b${i}.ts`, size: 1, mtimeMs: 1, hash: `hb${i}` }, [
    { startLine: 1, endLine: 1, text: `uncommitted beta text ${'x'.repeat(2000)} ${i}`, hash: `b${i}`, kind: 'window' },
  ]);
}
process.stdout.write('mid\n');
setInterval(() => {}, 1000);
