// SPDX-License-Identifier: Apache-2.0
// OpenSandbox's published JavaScript SDK (@alibaba-group/opensandbox, unmodified, pinned in
// package-lock.json) against a running replhost-server. The SDK is pointed at replhost the way a
// user does it: ConnectionConfig's domain is "<host>:<port>/opensandbox" and its API key is the
// server's token (tst_opensandboxsdk passes both through OPEN_SANDBOX_DOMAIN and
// OPEN_SANDBOX_API_KEY). The published package has no code-interpreter client, so the execd code
// routes are driven through the SDK's own execd client (openapi-fetch, the one with the
// empty-body trap) and, for the stream, fetch with the endpoint's URL and headers.
// Run by tst_opensandboxsdk with `node --test`; the tests run one after another.

import { ConnectionConfig, Sandbox, SandboxApiException } from '@alibaba-group/opensandbox'
import { createExecdClient } from '@alibaba-group/opensandbox/internal'
import assert from 'node:assert/strict'
import { after, test } from 'node:test'

const domain = process.env.OPEN_SANDBOX_DOMAIN
const apiKey = process.env.OPEN_SANDBOX_API_KEY
assert.ok(domain && apiKey, 'OPEN_SANDBOX_DOMAIN and OPEN_SANDBOX_API_KEY must point at replhost-server')

const connectionConfig = () => new ConnectionConfig({ domain, apiKey, protocol: 'http' })
const minutes = (n) => n * 60 * 1000

// A create means a replhost sandbox: where the machine cannot make one, tst_opensandboxsdk says
// so and the suite asks for a plain directory.
const extensions = process.env.REPLHOST_OSB_ISOLATION ? { 'replhost.isolation': process.env.REPLHOST_OSB_ISOLATION } : {}

// The SDK's default resource is { cpu: '1', memory: '2Gi' }; a cpu below the machine's CPUs is a
// CPU quota, which an unprivileged server cannot set (and then refuses), so the memory limit is
// asked alone.
const sandbox = await Sandbox.create({
  connectionConfig: connectionConfig(),
  image: 'opensandbox/code-interpreter:v1.1.0',
  env: { GREETING: 'hello from the env layer' },
  metadata: { suite: 'replhost' },
  timeoutSeconds: 600,
  resource: { memory: '2Gi' },
  extensions,
})
after(() => sandbox.close())

// The execd connection exactly as the SDK builds it: endpoint URL, connection headers (the API
// key) plus the endpoint's headers (the execd token).
const endpoint = await sandbox.getEndpoint(44772)
const execdUrl = `http://${endpoint.endpoint}`
const execdHeaders = { ...sandbox.connectionConfig.headers, ...(endpoint.headers ?? {}) }
const execd = createExecdClient({ baseUrl: execdUrl, headers: execdHeaders })

async function rejectsWithStatus(promise, status) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof SandboxApiException, `expected an API error, got ${error}`)
    assert.equal(error.statusCode, status)
    return true
  })
}

// POST /code, read as execd streams it: every event is one line of JSON followed by a blank
// line, with no "data:" prefix (the strictest official parser, Kotlin's, decodes every non-blank
// line as JSON). `onEvent` may act on events as they come.
async function runCode(body, onEvent = () => {}) {
  const response = await fetch(`${execdUrl}/code`, {
    method: 'POST',
    headers: { ...execdHeaders, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (response.status !== 200)
    assert.fail(`POST /code answered ${response.status}: ${await response.text()}`)
  assert.match(response.headers.get('content-type'), /^text\/event-stream/)
  const decoder = new TextDecoder()
  const events = []
  let buffer = ''
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true })
    let end
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      assert.ok(!block.includes('\n'), `an event is one line: ${JSON.stringify(block)}`)
      assert.ok(!block.startsWith('data:'), 'no SSE "data:" prefix')
      const event = JSON.parse(block)
      assert.equal(typeof event.type, 'string')
      assert.equal(typeof event.timestamp, 'number', `timestamp on ${block}`)
      events.push(event)
      await onEvent(event)
    }
  }
  assert.equal(buffer, '', 'the stream ends after a complete event')
  return events
}

// The contract OpenSandbox's own end-to-end tests hold every run to.
function assertEventContract(events, contextId) {
  const inits = events.filter((e) => e.type === 'init')
  assert.equal(inits.length, 1, 'exactly one init')
  assert.equal(events[0].type, 'init', 'init comes first')
  assert.equal(inits[0].text, contextId, 'init carries the context id')
  assert.ok(Math.abs(inits[0].timestamp - Date.now()) < minutes(3), 'init timestamp is recent')
  const completes = events.filter((e) => e.type === 'execution_complete')
  const errors = events.filter((e) => e.type === 'error')
  assert.ok(completes.length + errors.length >= 1, 'a terminal event')
  assert.ok(completes.length <= 1)
  if (completes.length === 1)
    assert.ok(completes[0].execution_time >= 0)
  for (const error of errors) {
    assert.ok(error.error.ename, 'an error has a name')
    assert.notEqual(error.error.evalue, undefined)
  }
}

test('create answers Running with the recorded image, metadata and expiry', async () => {
  const info = await sandbox.getInfo()
  assert.equal(info.id, sandbox.id)
  assert.equal(info.status.state, 'Running')
  assert.equal(info.image.uri, 'opensandbox/code-interpreter:v1.1.0')
  assert.deepEqual(info.metadata, { suite: 'replhost' })
  const left = info.expiresAt.getTime() - Date.now()
  assert.ok(left > minutes(9) && left <= minutes(10), `expires in ${left} ms`)
  assert.equal(await sandbox.isHealthy(), true)
})

test('what a sandbox cannot honour is refused, not ignored', async () => {
  await rejectsWithStatus(Sandbox.create({ connectionConfig: connectionConfig(), image: 'python:3.11',
    resource: { memory: '1Gi', 'nvidia.com/gpu': '1' }, extensions }), 400)
  await rejectsWithStatus(Sandbox.create({ connectionConfig: connectionConfig(), image: 'python:3.11',
    resource: { memory: '1Gi' }, networkPolicy: { egress: [{ action: 'allow', target: 'example.com' }] }, extensions }), 400)
})

test('endpoints answer for any port, without a scheme, in the form OpenSandbox checks', async () => {
  for (const port of [44772, 18080, 8080]) {
    const other = await sandbox.getEndpoint(port)
    assert.doesNotMatch(other.endpoint, /^[a-z]+:\/\//)
    // OpenSandbox's own end-to-end check (assertEndpointHasPort): a route ends in `/<port>`,
    // anything else in `:<port>`.
    assert.ok(other.endpoint.includes('/') ? other.endpoint.endsWith(`/${port}`) : other.endpoint.endsWith(`:${port}`),
      other.endpoint)
    assert.equal(other.headers['X-EXECD-ACCESS-TOKEN'], apiKey)
  }
  assert.equal(await sandbox.getEndpointUrl(44772), execdUrl)
})

test('commands.run streams output and sees the sandbox env', async () => {
  const seen = []
  const execution = await sandbox.commands.run('echo "$GREETING"; echo second; echo oops >&2', {},
    { onStdout: (message) => seen.push(message.text) })
  assert.deepEqual(execution.logs.stdout.map((m) => m.text), ['hello from the env layer', 'second'])
  assert.deepEqual(seen, ['hello from the env layer', 'second'])
  assert.deepEqual(execution.logs.stderr.map((m) => m.text), ['oops'])
  assert.equal(execution.exitCode, 0)
  assert.ok(execution.complete.executionTimeMs >= 0)

  const status = await sandbox.commands.getCommandStatus(execution.id)
  assert.equal(status.running, false)
  assert.equal(status.exitCode, 0)
  assert.ok(status.finishedAt instanceof Date)
})

test('a failing command reports its exit code', async () => {
  const execution = await sandbox.commands.run('echo before; exit 3')
  assert.equal(execution.exitCode, 3)
  assert.equal(execution.error.name, 'CommandExecError')
  assert.deepEqual(execution.logs.stdout.map((m) => m.text), ['before'])
})

test('files: write, read, list, info, search, move, replace, delete', async () => {
  await sandbox.files.createDirectories([{ path: 'notes', mode: 755 }])
  await sandbox.files.writeFiles([
    { path: 'notes/a.txt', data: 'alpha beta alpha', mode: 600 },
    { path: 'notes/b.py', data: new TextEncoder().encode('print(1)\n') },
  ])
  assert.equal(await sandbox.files.readFile('notes/a.txt'), 'alpha beta alpha')

  const listing = await sandbox.files.listDirectory({ path: 'notes' })
  const names = listing.map((f) => f.path.split('/').pop()).sort()
  assert.deepEqual(names, ['a.txt', 'b.py'])
  const a = listing.find((f) => f.path.endsWith('/notes/a.txt'))
  assert.equal(a.type, 'file')
  assert.equal(a.size, 16)
  assert.equal(a.mode, 600)
  assert.ok(a.modifiedAt instanceof Date)

  // Absolute paths inside the workspace work too: the same file through its full path.
  const info = await sandbox.files.getFileInfo([a.path])
  assert.equal(info[a.path].size, 16)
  const pwd = await sandbox.commands.run('cat notes/a.txt')
  assert.deepEqual(pwd.logs.stdout.map((m) => m.text), ['alpha beta alpha'])

  const found = await sandbox.files.search({ path: '.', pattern: '*.py' })
  assert.deepEqual(found.map((f) => f.path.split('/').pop()), ['b.py'])

  const counts = await sandbox.files.replaceContentsDetailed([
    { path: 'notes/a.txt', oldContent: 'alpha', newContent: 'gamma' },
  ])
  assert.deepEqual(counts, [{ path: 'notes/a.txt', replacedCount: 2 }])
  await sandbox.files.moveFiles([{ src: 'notes/a.txt', dest: 'notes/c.txt' }])
  assert.equal(await sandbox.files.readFile('notes/c.txt'), 'gamma beta gamma')
  await sandbox.files.setPermissions([{ path: 'notes/c.txt', mode: 644 }])
  assert.equal((await sandbox.files.getFileInfo(['notes/c.txt']))['notes/c.txt'].mode, 644)

  await sandbox.files.deleteFiles(['notes/c.txt'])
  await rejectsWithStatus(sandbox.files.getFileInfo(['notes/c.txt']), 404)
  await sandbox.files.deleteDirectories(['notes'])
  await rejectsWithStatus(sandbox.files.listDirectory({ path: 'notes' }), 404)
})

test('files outside the workspace are refused', async () => {
  await rejectsWithStatus(sandbox.files.getFileInfo(['/etc/passwd']), 403)
  await assert.rejects(sandbox.files.writeFiles([{ path: '/var/replhost-outside.txt', data: 'x' }]),
    (error) => error.statusCode === 403)
})

// A replhost sandbox is seen as a container is: its code works in /workspace, which is its
// HOME, and its /tmp is its own and kept, so what either side writes there the other reads.
const sandboxed = !process.env.REPLHOST_OSB_ISOLATION
test('/tmp and ~ are the sandbox\'s, for the files API and for its code', { skip: !sandboxed && 'no sandbox on this machine' }, async () => {
  await sandbox.files.writeFiles([
    { path: '/tmp/osb-files.txt', data: 'tmp through files' },
    { path: '~/osb-files.txt', data: 'home through files' },
  ])
  assert.equal(await sandbox.files.readFile('/tmp/osb-files.txt'), 'tmp through files')
  assert.equal(await sandbox.files.readFile('~/osb-files.txt'), 'home through files')
  assert.equal(await sandbox.files.readFile('/workspace/osb-files.txt'), 'home through files')

  const seen = await sandbox.commands.run('cat /tmp/osb-files.txt; echo; cat ~/osb-files.txt; echo; pwd; echo "$HOME"')
  assert.deepEqual(seen.logs.stdout.map((m) => m.text),
    ['tmp through files', 'home through files', '/workspace', '/workspace'])

  const { data: context } = await execd.POST('/code/context', { body: { language: 'python' } })
  const run = await runCode({
    code: "import os\nopen('/tmp/osb-code.txt', 'w').write('tmp from code')\n"
      + "open(os.path.expanduser('~/osb-code.txt'), 'w').write('home from code')\nprint(os.getcwd())",
    context: { id: context.id, language: 'python' },
  })
  assert.equal(run.filter((e) => e.type === 'stdout').map((e) => e.text).join(''), '/workspace\n')
  assert.equal(await sandbox.files.readFile('/tmp/osb-code.txt'), 'tmp from code')
  assert.equal(await sandbox.files.readFile('~/osb-code.txt'), 'home from code')
  const listing = await sandbox.files.listDirectory({ path: '/tmp' })
  assert.ok(listing.some((f) => f.path === '/tmp/osb-code.txt'), JSON.stringify(listing.map((f) => f.path)))
  await sandbox.files.deleteFiles(['/tmp/osb-files.txt', '/tmp/osb-code.txt', '~/osb-files.txt', '~/osb-code.txt'])
  await execd.DELETE('/code/contexts/{context_id}', { params: { path: { context_id: context.id } } })
})

test('getMetrics reports sane machine figures', async () => {
  const metrics = await sandbox.getMetrics()
  assert.ok(metrics.cpuCount > 0)
  assert.ok(metrics.cpuUsedPercentage >= 0 && metrics.cpuUsedPercentage <= 100)
  assert.ok(metrics.memoryTotalMiB > 0 && metrics.memoryUsedMiB <= metrics.memoryTotalMiB)
  assert.ok(Math.abs(metrics.timestamp - Date.now()) < minutes(3))
})

test('renew moves the expiry', async () => {
  const renewed = await sandbox.renew(20 * 60)
  const left = renewed.expiresAt.getTime() - Date.now()
  assert.ok(left > minutes(18) && left < minutes(22), `expires in ${left} ms`)
  const info = await sandbox.getInfo()
  assert.equal(info.expiresAt.getTime(), renewed.expiresAt.getTime())
})

test('code contexts: create, get, list, run with state, delete', async () => {
  const { data: context, error } = await execd.POST('/code/context', { body: { language: 'python' } })
  assert.equal(error, undefined)
  assert.equal(context.language, 'python')
  assert.ok(context.id)

  const got = await execd.GET('/code/contexts/{context_id}', { params: { path: { context_id: context.id } } })
  assert.deepEqual(got.data, { id: context.id, language: 'python' })
  const listed = await execd.GET('/code/contexts', { params: { query: { language: 'python' } } })
  assert.ok(listed.data.some((c) => c.id === context.id))

  const first = await runCode({ code: 'x = 42', context: { id: context.id, language: 'python' } })
  assertEventContract(first, context.id)
  const second = await runCode({ code: 'result = x\nprint("x is", x)\nresult', context: { id: context.id, language: 'python' } })
  assertEventContract(second, context.id)
  // A print() is two writes, which may reach the host as two stdout events.
  assert.equal(second.filter((e) => e.type === 'stdout').map((e) => e.text).join(''), 'x is 42\n')
  const results = second.filter((e) => e.type === 'result')
  assert.equal(results.length, 1)
  assert.equal(results[0].results.text, '42')
  assert.equal(results[0].results['text/plain'], undefined, 'text/plain is renamed to text')
  const countIndex = second.findIndex((e) => e.type === 'execution_count')
  assert.ok(countIndex >= 0 && countIndex < second.indexOf(results[0]), 'execution_count before result')

  // An empty 200 must say Content-Length: 0, or openapi-fetch fails parsing it.
  const removed = await execd.DELETE('/code/contexts/{context_id}', { params: { path: { context_id: context.id } } })
  assert.equal(removed.error, undefined)
  assert.equal(removed.response.status, 200)
  const gone = await execd.GET('/code/contexts/{context_id}', { params: { path: { context_id: context.id } } })
  assert.equal(gone.response.status, 404)
  assert.equal(gone.error.code, 'CONTEXT_NOT_FOUND')
})

test('errors end the run with an error event', async () => {
  const { data: context } = await execd.POST('/code/context', { body: { language: 'python' } })
  const events = await runCode({ code: 'print(undefined_variable)', context: { id: context.id } })
  assertEventContract(events, context.id)
  const error = events.find((e) => e.type === 'error')
  assert.equal(error.error.ename, 'NameError')
  assert.ok(error.error.traceback.length > 0)
})

test('a run by language uses that language\'s default context', async () => {
  const events = await runCode({ code: 'result = 2 + 2\nresult', context: { language: 'python' } })
  const init = events[0]
  assertEventContract(events, init.text)
  assert.equal(events.find((e) => e.type === 'result').results.text, '4')
  const again = await runCode({ code: 'result', context: { language: 'python' } })
  assert.equal(again[0].text, init.text)
  assert.equal(again.find((e) => e.type === 'result').results.text, '4')
})

test('interrupt stops a loop and the context runs on', async () => {
  const { data: context } = await execd.POST('/code/context', { body: { language: 'python' } })
  let initId
  let interrupted
  const events = await runCode(
    { code: 'import time\nfor i in range(100): print(i); time.sleep(0.2)', context: { id: context.id } },
    async (event) => {
      if (event.type === 'init')
        initId = event.text
      // Once the loop is running, interrupt it by the id its init event gave.
      if (event.type === 'stdout' && !interrupted)
        interrupted = await execd.DELETE('/code', { params: { query: { id: initId } } })
    })
  assert.equal(interrupted.error, undefined)
  assert.equal(interrupted.response.status, 200)
  assertEventContract(events, context.id)
  assert.equal(events.find((e) => e.type === 'error').error.ename, 'KeyboardInterrupt')
  assert.ok(events.filter((e) => e.type === 'stdout').length < 100)

  const later = await runCode({ code: "print('ok')", context: { id: context.id } })
  assertEventContract(later, context.id)
  // A print() is two writes, which may reach the host as two stdout events.
  assert.equal(later.filter((e) => e.type === 'stdout').map((e) => e.text).join(''), 'ok\n')
  assert.ok(later.some((e) => e.type === 'execution_complete'))

  const fake = await execd.DELETE('/code', { params: { query: { id: `fake-${Date.now()}` } } })
  assert.equal(fake.response.status, 404)
})

test('bulk delete by language empties the list', async () => {
  const removed = await execd.DELETE('/code/contexts', { params: { query: { language: 'python' } } })
  assert.equal(removed.error, undefined)
  assert.equal(removed.response.status, 200)
  const listed = await execd.GET('/code/contexts', { params: { query: { language: 'python' } } })
  assert.deepEqual(listed.data, [])
  const again = await execd.DELETE('/code/contexts', { params: { query: { language: 'python' } } })
  assert.equal(again.response.status, 200)
})

test('TypeScript contexts, named TYPESCRIPT as OpenSandbox\'s SDKs name them, run with types stripped', async () => {
  const { data: context, error } = await execd.POST('/code/context', { body: { language: 'TYPESCRIPT' } })
  assert.equal(error, undefined)
  assert.equal(context.language, 'typescript')
  const listed = await execd.GET('/code/contexts', { params: { query: { language: 'TYPESCRIPT' } } })
  assert.ok(listed.data.some((c) => c.id === context.id))

  const first = await runCode({ code: 'interface Item { n: number }\nconst items: Item[] = [{ n: 40 }, { n: 2 }]',
    context: { id: context.id, language: 'TYPESCRIPT' } })
  assertEventContract(first, context.id)
  const second = await runCode({ code: 'const total: number = items.reduce((s: number, i: Item) => s + i.n, 0)\ntotal',
    context: { id: context.id } })
  assertEventContract(second, context.id)
  assert.equal(second.find((e) => e.type === 'result').results.text, '42')

  // A type error does not stop a run; a runtime error points at the TypeScript line.
  const typed = await runCode({ code: 'const s: number = "text"\nconsole.log(s)', context: { language: 'typescript' } })
  assert.equal(typed.filter((e) => e.type === 'stdout').map((e) => e.text).join(''), 'text\n')
  const failed = await runCode({ code: 'type T = number\n\nnull!.boom', context: { id: context.id } })
  const failure = failed.find((e) => e.type === 'error').error
  assert.equal(failure.ename, 'TypeError')
  assert.match(failure.traceback.join('\n'), /<cell-\d+>:3:/)
  await execd.DELETE('/code/contexts/{context_id}', { params: { path: { context_id: context.id } } })
})

test('an unknown language is refused at once', async () => {
  const { error, response } = await execd.POST('/code/context', { body: { language: 'cobol' } })
  assert.equal(response.status, 400)
  assert.match(error.message, /cobol/)
})

test('a sandbox created with a short timeout is deleted when it expires', async () => {
  const shortLived = await Sandbox.create({
    connectionConfig: connectionConfig(),
    image: 'python:3.11',
    timeoutSeconds: 1,
    resource: { memory: '1Gi' },
    extensions,
  })
  // Polled until it is gone: the expiry, not the test, decides when.
  for (;;) {
    try {
      await shortLived.getInfo()
    } catch (error) {
      assert.equal(error.statusCode, 404)
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.equal(await shortLived.isHealthy(), false)
  await shortLived.close()
})

test('list finds the sandbox by metadata; kill deletes it', async () => {
  const manager = await Sandbox.connect({ sandboxId: sandbox.id, connectionConfig: connectionConfig() })
  const listed = await manager.sandboxes.listSandboxes({ metadata: { suite: 'replhost' } })
  assert.deepEqual(listed.items.map((s) => s.id), [sandbox.id])
  assert.equal(listed.pagination.totalItems, 1)
  await manager.close()

  await sandbox.kill()
  await rejectsWithStatus(sandbox.getInfo(), 404)
  assert.equal(await sandbox.isHealthy(), false)
})
