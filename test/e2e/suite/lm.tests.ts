// Extension-host tests of the chat model provider: the way other extensions (and VS Code's chat)
// reach Strata's models, through vscode.lm.
import * as vscode from 'vscode';
import { assert, eventually, type ExtHostTest } from './runner.js';

export const STRATA_EXTENSION_ID = 'strata.strata-vscode';
const ACTIVATES = 'the Strata extension is installed and activates';
const LISTED = 'vscode.lm lists a Strata chat model with token limits';

async function strataModel(timeoutMs: number): Promise<vscode.LanguageModelChat> {
  return eventually('a chat model from vendor "strata" in vscode.lm', async () => {
    const models = await vscode.lm.selectChatModels({ vendor: 'strata' });
    return models[0];
  }, timeoutMs);
}

/** Sends one user message and collects the streamed text fragments. */
async function ask(model: vscode.LanguageModelChat, prompt: string, token?: vscode.CancellationToken): Promise<string[]> {
  const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(prompt)], { justification: 'Strata e2e test' }, token);
  const fragments: string[] = [];
  for await (const fragment of response.text) fragments.push(fragment);
  return fragments;
}

export const lmTests: ExtHostTest[] = [
  {
    name: ACTIVATES,
    timeoutMs: 60_000,
    fn: async () => {
      const ext = vscode.extensions.getExtension(STRATA_EXTENSION_ID);
      assert(ext, `extension ${STRATA_EXTENSION_ID} is not installed (installed: ${vscode.extensions.all.map((e) => e.id).filter((id) => !id.startsWith('vscode.')).join(', ')})`);
      await ext.activate();
      assert(ext.isActive, `${STRATA_EXTENSION_ID} did not activate`);
    },
  },
  {
    name: LISTED,
    // Includes the server start and model load on the tiny test model.
    timeoutMs: 150_000,
    needs: [ACTIVATES],
    fn: async () => {
      const model = await strataModel(140_000);
      assert(model.vendor === 'strata', `vendor is ${model.vendor}`);
      assert(model.maxInputTokens > 0, `maxInputTokens is ${model.maxInputTokens}`);
      assert(model.id && model.name, `model has no id/name: ${JSON.stringify({ id: model.id, name: model.name })}`);
    },
  },
  {
    name: 'sendRequest streams an answer from the local model',
    needs: [LISTED],
    timeoutMs: 90_000,
    fn: async () => {
      const model = await strataModel(10_000);
      const fragments = await ask(model, 'Write a short greeting.');
      const text = fragments.join('');
      assert(text.trim().length > 0, `empty answer (${fragments.length} fragments)`);
      assert(fragments.length >= 2, `answer came as ${fragments.length} fragment(s), not a stream: ${JSON.stringify(text.slice(0, 200))}`);
      console.log(`[lm] ${fragments.length} fragments: ${JSON.stringify(text.slice(0, 120))}`);
    },
  },
  {
    name: 'countTokens counts with the model tokenizer',
    needs: [LISTED],
    timeoutMs: 30_000,
    fn: async () => {
      const model = await strataModel(10_000);
      // 40 two-letter words: a GPT-style pre-tokenizer makes each " xy" at least one token (>= 40),
      // while a characters/4 estimate says 30. So >= 40 shows the server's tokenizer answered.
      const words = Array.from({ length: 40 }, (_, i) => String.fromCharCode(97 + (i % 26), 97 + ((i * 7 + 3) % 26)));
      const text = ' ' + words.join(' ');
      const count = await model.countTokens(text);
      assert(count >= words.length, `countTokens of ${words.length} words (${text.length} chars) = ${count}: looks like an estimate, not the tokenizer`);
      const hello = await model.countTokens('hello world');
      assert(hello > 0 && hello < count, `countTokens('hello world') = ${hello}`);
    },
  },
  {
    name: 'cancelling a request ends its stream',
    needs: [LISTED],
    timeoutMs: 60_000,
    fn: async () => {
      const model = await strataModel(10_000);
      const cts = new vscode.CancellationTokenSource();
      const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('Count from one to one thousand.')], {}, cts.token);
      let fragments = 0;
      const t0 = Date.now();
      try {
        for await (const _ of response.text) {
          fragments++;
          if (fragments === 1) cts.cancel();
        }
      } catch (err) {
        // Ending with a CancellationError is as good as ending quietly.
        assert(err instanceof vscode.CancellationError || /cancel/i.test(String(err)), `stream failed instead of ending: ${String(err)}`);
      }
      assert(fragments >= 1, 'no fragment arrived before the cancel');
      assert(Date.now() - t0 < 20_000, `stream took ${Date.now() - t0} ms to end after the cancel`);
    },
  },
];
