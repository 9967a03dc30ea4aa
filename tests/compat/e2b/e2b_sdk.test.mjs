// SPDX-License-Identifier: Apache-2.0
// E2B's published code interpreter SDK (@e2b/code-interpreter, unmodified, pinned in
// package-lock.json) against a running replhost-server. The SDK is pointed at replhost the way
// a user does it, through its environment: E2B_DEBUG=true and E2B_SANDBOX_URL, which
// tst_e2bsdk sets to http://127.0.0.1:<port>/e2b/<token> or to the root of a --e2b-port
// listener. Run by tst_e2bsdk with `node --test`; the tests run one after another.

import { Sandbox, NotFoundError, TimeoutError } from '@e2b/code-interpreter'
import assert from 'node:assert/strict'
import { test } from 'node:test'

assert.equal(process.env.E2B_DEBUG, 'true', 'E2B_DEBUG=true makes the SDK talk to E2B_SANDBOX_URL')
assert.ok(process.env.E2B_SANDBOX_URL, 'E2B_SANDBOX_URL must point at replhost-server')

// In debug mode create() makes no control-plane call: it only builds the client.
const sandbox = await Sandbox.create()

// For runCode calls that are expected to fail: the SDK clears its request timer only after a
// successful answer, so a refused request would keep node alive for the timer's minute.
const noRequestTimer = { requestTimeoutMs: 0 }

test('runCode keeps state across calls', async () => {
  const context = await sandbox.createCodeContext()
  await sandbox.runCode('x = 1', { context })
  const execution = await sandbox.runCode('x += 1; x', { context })
  assert.equal(execution.text, '2')
  assert.equal(execution.executionCount, 2)
  assert.equal(execution.error, undefined)
  await sandbox.removeCodeContext(context)
})

test('callbacks receive stdout, stderr, results and errors as they come', async () => {
  const stdout = []
  const stderr = []
  const results = []
  const errors = []
  const callbacks = {
    onStdout: (message) => stdout.push(message),
    onStderr: (message) => stderr.push(message),
    onResult: (result) => results.push(result),
    onError: (error) => errors.push(error),
  }
  const execution = await sandbox.runCode(
    "import sys\nprint('hello')\nprint('careful', file=sys.stderr)\n40 + 2", callbacks)
  assert.deepEqual(stdout.map((m) => m.line), ['hello\n'])
  assert.equal(stdout[0].error, false)
  assert.deepEqual(stderr.map((m) => m.line), ['careful\n'])
  assert.equal(stderr[0].error, true)
  assert.equal(results.length, 1)
  assert.equal(results[0].text, '42')
  assert.equal(results[0].isMainResult, true)
  assert.deepEqual(execution.logs, { stdout: ['hello\n'], stderr: ['careful\n'] })
  assert.equal(errors.length, 0)

  await sandbox.runCode('undefined_name', callbacks)
  assert.equal(errors.length, 1)
  assert.equal(errors[0].name, 'NameError')
})

test('display() output is a result that is not the main one', async () => {
  const execution = await sandbox.runCode(
    "display({'text/html': '<b>hi</b>', 'text/plain': 'hi'}, raw=True)\n'last'")
  assert.equal(execution.results.length, 2)
  assert.equal(execution.results[0].isMainResult, false)
  assert.equal(execution.results[0].html, '<b>hi</b>')
  assert.deepEqual(execution.results[0].formats(), ['html'])
  assert.equal(execution.text, 'last')
})

// Debian's python3-matplotlib and python3-pandas, which scripts/setup installs.
async function pythonHas(module) {
  const probe = await sandbox.runCode(`import importlib.util\nimportlib.util.find_spec('${module}') is not None`)
  return probe.text === 'True'
}

test('IPython.display objects are html and markdown results', async () => {
  const execution = await sandbox.runCode(
    "from IPython.display import display, HTML, Markdown\ndisplay(HTML('<b>bold</b>'))\nMarkdown('# Title')")
  assert.equal(execution.results.length, 2)
  assert.equal(execution.results[0].html, '<b>bold</b>')
  assert.equal(execution.results[0].isMainResult, false)
  assert.equal(execution.results[1].markdown, '# Title')
  assert.equal(execution.results[1].isMainResult, true)
})

test('a matplotlib figure has its chart beside its png', async (t) => {
  if (!(await pythonHas('matplotlib'))) return t.skip('matplotlib is not installed for this Python')
  const execution = await sandbox.runCode([
    'import matplotlib.pyplot as plt',
    'fig, ax = plt.subplots()',
    "ax.bar(['Author A', 'Author B'], [100, 200], label='Books Sold')",
    "ax.set_title('Book Sales by Authors')",
    "ax.set_xlabel('Authors')",
    "ax.set_ylabel('Number of Books Sold (copies)')",
    'plt.show()',
  ].join('\n'))
  assert.equal(execution.error, undefined)
  assert.equal(execution.results.length, 1)
  const [figure] = execution.results
  assert.ok(Buffer.from(figure.png, 'base64').subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47])))
  assert.deepEqual(figure.chart, {
    type: 'bar',
    title: 'Book Sales by Authors',
    x_label: 'Authors',
    y_label: 'Number of Books Sold (copies)',
    x_unit: null,
    y_unit: 'copies',
    elements: [
      { label: 'Author A', group: 'Books Sold', value: 100 },
      { label: 'Author B', group: 'Books Sold', value: 200 },
    ],
  })
})

test('a DataFrame has its data by column, JSON-safe', async (t) => {
  if (!(await pythonHas('pandas'))) return t.skip('pandas is not installed for this Python')
  const execution = await sandbox.runCode([
    'import pandas as pd, numpy as np',
    "pd.DataFrame({'score': [1.5, np.nan], 'when': pd.to_datetime(['2026-01-02 03:04:05', None])})",
  ].join('\n'))
  assert.equal(execution.error, undefined)
  const [table] = execution.results
  assert.equal(table.isMainResult, true)
  assert.match(table.html, /<table/)
  assert.deepEqual(table.data, { score: [1.5, null], when: ['2026-01-02T03:04:05', null] })
  assert.ok(table.formats().includes('data'))
})

test('an error has its name, value and traceback', async () => {
  const execution = await sandbox.runCode('def f():\n    return 1 / 0\nf()')
  assert.equal(execution.error.name, 'ZeroDivisionError')
  assert.equal(execution.error.value, 'division by zero')
  assert.match(execution.error.traceback, /ZeroDivisionError/)
  assert.match(execution.error.traceback, /in f/)
})

test('per-run envs hold for that run only', async () => {
  const read = "import os\nos.environ.get('REPLHOST_E2B_SDK', 'unset')"
  const during = await sandbox.runCode(read, { envs: { REPLHOST_E2B_SDK: 'for this run' } })
  assert.equal(during.text, 'for this run')
  const after = await sandbox.runCode(read)
  assert.equal(after.text, 'unset')

  const shell = await sandbox.createCodeContext({ language: 'bash' })
  const echoed = await sandbox.runCode('echo "[$REPLHOST_E2B_SDK]"', {
    context: shell,
    envs: { REPLHOST_E2B_SDK: 'bash too' },
  })
  assert.deepEqual(echoed.logs.stdout, ['[bash too]\n'])
  const gone = await sandbox.runCode('echo "[$REPLHOST_E2B_SDK]"', { context: shell })
  assert.deepEqual(gone.logs.stdout, ['[]\n'])
  await sandbox.removeCodeContext(shell)
})

test('createCodeContext with cwd, and listCodeContexts', async () => {
  // The default context's cwd is the workspace directory; contexts live inside it.
  const home = (await sandbox.runCode('import os\nos.getcwd()')).text
  await sandbox.runCode(`os.makedirs(${JSON.stringify(home + '/e2b-sdk-cwd')}, exist_ok=True)`)
  const context = await sandbox.createCodeContext({ language: 'python', cwd: `${home}/e2b-sdk-cwd` })
  assert.equal(context.language, 'python')
  assert.equal(context.cwd, `${home}/e2b-sdk-cwd`)
  assert.equal((await sandbox.runCode('import os\nos.getcwd()', { context })).text, context.cwd)

  const listed = await sandbox.listCodeContexts()
  assert.ok(listed.some((c) => c.id === context.id && c.cwd === context.cwd && c.language === 'python'))
  await sandbox.removeCodeContext(context.id)
})

test('restartCodeContext clears the state', async () => {
  const context = await sandbox.createCodeContext({ language: 'python' })
  await sandbox.runCode('y = 5', { context })
  assert.equal((await sandbox.runCode('y', { context })).text, '5')
  await sandbox.restartCodeContext(context)
  const after = await sandbox.runCode('y', { context })
  assert.equal(after.error.name, 'NameError')
  await sandbox.removeCodeContext(context)
})

test('removeCodeContext removes it for good', async () => {
  const context = await sandbox.createCodeContext()
  await sandbox.removeCodeContext(context)
  const listed = await sandbox.listCodeContexts()
  assert.ok(!listed.some((c) => c.id === context.id))
  await assert.rejects(sandbox.runCode('1', { context, ...noRequestTimer }), NotFoundError)
  await assert.rejects(sandbox.restartCodeContext(context), NotFoundError)
})

test('a JavaScript context keeps its bindings', async () => {
  const context = await sandbox.createCodeContext({ language: 'javascript' })
  assert.equal(context.language, 'javascript')
  await sandbox.runCode('const base = 40', { context })
  const execution = await sandbox.runCode('console.log("js"); base + 2', { context })
  assert.equal(execution.text, '42')
  assert.deepEqual(execution.logs.stdout, ['js\n'])
  // `language` alone runs in that language's default context, "js" included.
  assert.equal((await sandbox.runCode('await Promise.resolve(7)', { language: 'js' })).text, '7')
  await sandbox.removeCodeContext(context)
})

test('a Bash context keeps its variables and directory', async () => {
  const context = await sandbox.createCodeContext({ language: 'bash' })
  await sandbox.runCode('export GREETING=hello; mkdir -p e2b-sdk-bash && cd e2b-sdk-bash', { context })
  const execution = await sandbox.runCode('echo "$GREETING from $(basename "$PWD")"', { context })
  assert.deepEqual(execution.logs.stdout, ['hello from e2b-sdk-bash\n'])
  await sandbox.removeCodeContext(context)
})

test('TypeScript runs with its types stripped, in a context that keeps its bindings', async () => {
  // E2B's SDK names it 'ts'; a type error does not stop the run.
  const context = await sandbox.createCodeContext({ language: 'ts' })
  assert.equal(context.language, 'typescript')
  await sandbox.runCode('interface Point { x: number; y: number }\nconst p: Point = { x: 40, y: 2 }', { context })
  const execution = await sandbox.runCode('const label: number = "sum"\nconsole.log(label); p.x + p.y', { context })
  assert.equal(execution.error, undefined)
  assert.equal(execution.text, '42')
  assert.deepEqual(execution.logs.stdout, ['sum\n'])
  // `language` alone runs in the default TypeScript context.
  const awaited = await sandbox.runCode('await Promise.resolve<number>(7)', { language: 'ts' })
  assert.equal(awaited.text, '7')
  const failed = await sandbox.runCode('type T = string\nnull!.boom', { language: 'typescript' })
  assert.equal(failed.error.name, 'TypeError')
  assert.match(failed.error.traceback, /<cell-\d+>:2:/)
  await sandbox.removeCodeContext(context)
})

test('R runs in its Jupyter kernel under the name E2B gives it, and keeps its state', async () => {
  const execution = await sandbox.runCode('x <- 41; x + 1', { language: 'r' })
  assert.equal(execution.error, undefined)
  // IRkernel shows R's visible values as displays: results that are not the main one, so the
  // execution's text is empty, as with E2B's own interpreter, whose R tests read results[0].
  assert.deepEqual(execution.results.map((r) => r.text), ['[1] 42'])
  assert.deepEqual(execution.results.map((r) => r.isMainResult), [false])
  assert.equal(execution.text, undefined)
  const context = await sandbox.createCodeContext({ language: 'r' })
  await sandbox.runCode('y <- 1', { context })
  const next = await sandbox.runCode('cat("y is", y, "\\n"); y + 1', { context })
  assert.deepEqual(next.logs.stdout, ['y is 1 \n'])
  assert.deepEqual(next.results.map((r) => r.text), ['[1] 2'])
  const failed = await sandbox.runCode('stop("boom")', { context })
  assert.match(failed.error.value, /boom/)
  await sandbox.removeCodeContext(context)
})

test('timeoutMs interrupts a long run and the context keeps its state', async () => {
  const context = await sandbox.createCodeContext()
  await sandbox.runCode('z = 7', { context })
  // A minute unless interrupted; `finished` is set only if it is not.
  await assert.rejects(
    sandbox.runCode('import time\nfor _ in range(240):\n    time.sleep(0.25)\nfinished = True',
      { context, timeoutMs: 2000 }),
    TimeoutError)
  // The next run waits for the interrupted one to end, then sees the earlier state.
  const after = await sandbox.runCode("(z, 'finished' in globals())", { context })
  assert.equal(after.text, '(7, False)')
  await sandbox.removeCodeContext(context)
})
