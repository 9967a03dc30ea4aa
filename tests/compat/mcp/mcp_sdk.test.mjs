// SPDX-License-Identifier: Apache-2.0
// The official Model Context Protocol TypeScript SDK (@modelcontextprotocol/sdk, unmodified,
// pinned in package-lock.json) as an agent's client of replhost. MCP_TRANSPORT says how it
// reaches the server: "http" (Streamable HTTP at MCP_URL with the bearer token MCP_TOKEN), or
// "stdio" (MCP_COMMAND with the JSON array of arguments MCP_ARGS, as an agent's configuration
// starts `replhost-cli mcp`). Run by tst_mcpsdk with `node --test`; the tests run one after
// another against one server.

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

const transportName = process.env.MCP_TRANSPORT ?? 'http'

function makeTransport() {
  if (transportName === 'stdio') {
    return new StdioClientTransport({
      command: process.env.MCP_COMMAND,
      args: JSON.parse(process.env.MCP_ARGS ?? '[]'),
      env: { ...process.env },
      stderr: 'inherit',
    })
  }
  assert.ok(process.env.MCP_URL && process.env.MCP_TOKEN, 'MCP_URL and MCP_TOKEN must point at replhost-server')
  return new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN}` } },
  })
}

const client = new Client({ name: 'replhost-mcp-sdk-test', version: '1.0.0' })
let languages = new Map()

before(async () => {
  await client.connect(makeTransport())
  const listed = await client.callTool({ name: 'list_languages', arguments: {} })
  for (const language of listed.structuredContent.languages)
    languages.set(language.id, language)
})
after(() => client.close())

const structured = (result) => result.structuredContent
const texts = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n')

function needs(t, language) {
  const entry = languages.get(language)
  if (!entry?.available) {
    t.skip(`${language} is not available here: ${entry?.reason ?? 'no plugin'}`)
    return false
  }
  return true
}

test('the server negotiates the revision the SDK speaks', () => {
  assert.equal(client.getServerVersion().name, 'replhost')
  assert.ok(client.getServerCapabilities().tools)
})

test('tools/list describes every tool with its schemas and annotations', async () => {
  const { tools } = await client.listTools()
  const names = tools.map((tool) => tool.name)
  for (const expected of ['list_languages', 'create_context', 'list_contexts', 'delete_context',
    'restart_context', 'run_code', 'interrupt', 'get_history'])
    assert.ok(names.includes(expected), `${expected} in ${names}`)
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name)
    assert.equal(tool.outputSchema?.type, 'object', tool.name)
    assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', tool.name)
    assert.ok(tool.description.length > 40, tool.name)
  }
  const runCode = tools.find((tool) => tool.name === 'run_code')
  assert.deepEqual(runCode.inputSchema.required, ['code'])
  assert.equal(runCode.annotations.readOnlyHint, false)
})

for (const [language, assign, read, expected] of [
  ['python', 'x = 41', 'x + 1', '42'],
  ['javascript', 'let x = 41', 'x + 1', '42'],
  ['bash', 'x=41', 'echo $((x + 1))', '42'],
]) {
  test(`state carries over between run_code calls (${language})`, async (t) => {
    if (!needs(t, language))
      return
    const created = await client.callTool({ name: 'create_context', arguments: { language } })
    assert.equal(created.isError, false, texts(created))
    const context = structured(created).id
    const first = await client.callTool({ name: 'run_code', arguments: { context_id: context, code: assign } })
    assert.equal(first.isError, false, texts(first))
    const second = await client.callTool({ name: 'run_code', arguments: { context_id: context, code: read } })
    assert.equal(second.isError, false, texts(second))
    const value = structured(second).result ?? structured(second).stdout.trim()
    assert.equal(value, expected)
    assert.ok(texts(second).includes(expected))
    await client.callTool({ name: 'delete_context', arguments: { context_id: context } })
  })
}

test('run_code by language uses that language\'s default context', async (t) => {
  if (!needs(t, 'python'))
    return
  await client.callTool({ name: 'run_code', arguments: { language: 'python', code: 'default_marker = 7' } })
  const read = await client.callTool({ name: 'run_code', arguments: { language: 'py', code: 'default_marker * 6' } })
  assert.equal(structured(read).result, '42')
  const listed = await client.callTool({ name: 'list_contexts', arguments: { language: 'python' } })
  // The default context is the oldest of its language.
  assert.equal(structured(listed).contexts[0].id, structured(read).context_id)
})

test('a Python error is an error result with its traceback', async (t) => {
  if (!needs(t, 'python'))
    return
  const result = await client.callTool({ name: 'run_code', arguments: { language: 'python', code: 'def f():\n    return 1 / 0\nf()' } })
  assert.equal(result.isError, true)
  assert.equal(structured(result).status, 'error')
  assert.equal(structured(result).error.ename, 'ZeroDivisionError')
  assert.match(texts(result), /ZeroDivisionError/)
  assert.match(texts(result), /in f/)
})

test('a matplotlib figure comes back as image/png content', async (t) => {
  if (!needs(t, 'python'))
    return
  const probe = await client.callTool({ name: 'run_code', arguments: { language: 'python', code: 'import importlib.util\nimportlib.util.find_spec("matplotlib") is not None' } })
  if (structured(probe).result !== 'True') {
    t.skip('matplotlib is not installed for this Python (scripts/setup installs python3-matplotlib)')
    return
  }
  const result = await client.callTool({
    name: 'run_code',
    arguments: { language: 'python', code: 'import matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.show()' },
  })
  assert.equal(result.isError, false, texts(result))
  const images = result.content.filter((c) => c.type === 'image')
  assert.equal(images.length, 1)
  assert.equal(images[0].mimeType, 'image/png')
  const png = Buffer.from(images[0].data, 'base64')
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  assert.ok(structured(result).displays[0].mime_types.includes('image/png'))
})

test('R runs in its Jupyter kernel under the name r, and its plots are images', async (t) => {
  if (!needs(t, 'jupyter-ir'))
    return
  await client.callTool({ name: 'run_code', arguments: { language: 'r', code: 'x <- 41' } })
  // IRkernel shows R's visible values as displays, which the structured content lists with
  // their text, and whose text is in the content a model reads.
  const value = await client.callTool({ name: 'run_code', arguments: { language: 'r', code: 'x + 1' } })
  assert.equal(value.isError, false, texts(value))
  assert.deepEqual(structured(value).displays.map((d) => d.text), ['[1] 42'])
  assert.equal(texts(value), '[1] 42')
  assert.equal(structured(value).result, null)
  const plot = await client.callTool({ name: 'run_code', arguments: { language: 'r', code: 'plot(1:10)' } })
  assert.equal(plot.isError, false, texts(plot))
  // A plot is its image: its text/plain ("plot without title") only names it.
  assert.equal(texts(plot), '')
  const images = plot.content.filter((c) => c.type === 'image')
  assert.equal(images.length, 1)
  assert.equal(images[0].mimeType, 'image/png')
  const png = Buffer.from(images[0].data, 'base64')
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
})

test('progress notifications arrive while a cell streams its output', async (t) => {
  if (!needs(t, 'python'))
    return
  const seen = []
  // A cell that streams: its first lines are out long before it ends. (The SDK hands a
  // notification to its handler a microtask after the message arrives, but a response at once,
  // so a notification that arrives together with the response to its request is dropped: only
  // output that comes before the end can be expected.)
  const result = await client.callTool(
    { name: 'run_code', arguments: { language: 'python', code: 'import time\nfor i in range(5):\n    print("tick", i, flush=True)\n    time.sleep(0.1)' } },
    undefined,
    { onprogress: (progress) => seen.push(progress) },
  )
  assert.equal(result.isError, false, texts(result))
  assert.equal(structured(result).stdout, 'tick 0\ntick 1\ntick 2\ntick 3\ntick 4\n')
  assert.ok(seen.length >= 1, 'no progress arrived')
  const streamed = seen.map((p) => p.message ?? '').join('')
  assert.match(streamed, /^tick 0\n/)
  for (let i = 1; i < seen.length; ++i)
    assert.ok(seen[i].progress > seen[i - 1].progress)
})

test('cancelling a long cell interrupts it and the next call still sees the variables', async (t) => {
  if (!needs(t, 'python'))
    return
  const created = await client.callTool({ name: 'create_context', arguments: { language: 'python' } })
  const context = structured(created).id
  const abort = new AbortController()
  const running = client.callTool(
    { name: 'run_code', arguments: { context_id: context, code: 'survivor = 123\nimport time\nprint("sleeping", flush=True)\ntime.sleep(600)' } },
    undefined,
    {
      signal: abort.signal,
      // Cancel once the run has started, which its first output shows.
      onprogress: () => abort.abort('enough'),
    },
  )
  await assert.rejects(running)
  // Runs in a context queue in order: this one runs once the interrupted one has ended.
  const after = await client.callTool({ name: 'run_code', arguments: { context_id: context, code: 'survivor' } })
  assert.equal(structured(after).result, '123')
  const history = await client.callTool({ name: 'get_history', arguments: { context_id: context } })
  assert.equal(structured(history).executions[1].status, 'interrupted')
})

// A second client, one that declares elicitation: its user answers each question with what
// `answer` returns for it. The questions asked are collected.
async function elicitingClient(answer) {
  const asking = new Client({ name: 'replhost-mcp-sdk-test-elicitation', version: '1.0.0' },
    { capabilities: { elicitation: {} } })
  const asked = []
  asking.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params)
    return answer(request.params)
  })
  await asking.connect(makeTransport())
  return { asking, asked }
}

const askOrEof = "try:\n    print('hello', input('Name? '))\nexcept EOFError:\n    print('eof')"

test('code that reads input asks the user through elicitation, and reads the answer', async (t) => {
  if (!needs(t, 'python'))
    return
  const { asking, asked } = await elicitingClient(() => ({ action: 'accept', content: { value: 'Ada' } }))
  try {
    const result = await asking.callTool({ name: 'run_code', arguments: { language: 'python', code: askOrEof } })
    assert.equal(result.isError, false, texts(result))
    assert.equal(structured(result).stdout, 'hello Ada\n')
    assert.equal(asked.length, 1)
    assert.equal(asked[0].message, 'Name? ')
    assert.equal(asked[0].requestedSchema.properties.value.type, 'string')
  } finally {
    await asking.close()
  }
})

for (const [what, action] of [['declined', 'decline'], ['cancelled', 'cancel']]) {
  test(`an elicitation ${what} is the end of input`, async (t) => {
    if (!needs(t, 'python'))
      return
    const { asking, asked } = await elicitingClient(() => ({ action }))
    try {
      const result = await asking.callTool({ name: 'run_code', arguments: { language: 'python', code: askOrEof } })
      assert.equal(structured(result).stdout, 'eof\n')
      assert.equal(asked.length, 1)
    } finally {
      await asking.close()
    }
  })
}

test('a password is never asked through elicitation', async (t) => {
  if (!needs(t, 'python'))
    return
  const { asking, asked } = await elicitingClient(() => ({ action: 'accept', content: { value: 'hunter2' } }))
  try {
    const result = await asking.callTool({
      name: 'run_code',
      arguments: { language: 'python', code: 'import getpass\ntry:\n    getpass.getpass()\nexcept EOFError:\n    print("eof")' },
    })
    assert.equal(structured(result).stdout, 'eof\n')
    assert.equal(asked.length, 0)
  } finally {
    await asking.close()
  }
})

test('a client without elicitation finds the end of input at once', async (t) => {
  if (!needs(t, 'python'))
    return
  const result = await client.callTool({ name: 'run_code', arguments: { language: 'python', code: askOrEof } })
  // input() writes its prompt itself when it reads the worker's own, empty, standard input.
  assert.equal(structured(result).stdout, 'Name? eof\n')
})

test('restart_context forgets the state; interrupt of an idle context is harmless', async (t) => {
  if (!needs(t, 'python'))
    return
  const created = await client.callTool({ name: 'create_context', arguments: { language: 'python', name: 'to restart' } })
  const context = structured(created).id
  await client.callTool({ name: 'run_code', arguments: { context_id: context, code: 'gone = 1' } })
  const restarted = await client.callTool({ name: 'restart_context', arguments: { context_id: context } })
  assert.equal(restarted.isError, false, texts(restarted))
  const read = await client.callTool({ name: 'run_code', arguments: { context_id: context, code: 'gone' } })
  assert.equal(read.isError, true)
  assert.equal(structured(read).error.ename, 'NameError')
  const interrupted = await client.callTool({ name: 'interrupt', arguments: { context_id: context } })
  assert.equal(interrupted.isError, false, texts(interrupted))
  const deleted = await client.callTool({ name: 'delete_context', arguments: { context_id: context } })
  assert.equal(structured(deleted).deleted, context)
  const again = await client.callTool({ name: 'delete_context', arguments: { context_id: context } })
  assert.equal(again.isError, true)
})

test('files written with write_file are read by code, and files code writes by read_file', async (t) => {
  if (!needs(t, 'python'))
    return
  const name = `sdk-${transportName}.txt`
  const written = await client.callTool({ name: 'write_file', arguments: { path: name, content: 'from the agent' } })
  assert.equal(written.isError, false, texts(written))
  const read = await client.callTool({ name: 'run_code', arguments: { language: 'python', code: `open(${JSON.stringify(name)}).read()` } })
  assert.equal(structured(read).result, "'from the agent'")
  await client.callTool({ name: 'run_code', arguments: { language: 'python', code: `open(${JSON.stringify(name)}, 'a').write(' and code')` } })
  const back = await client.callTool({ name: 'read_file', arguments: { path: name } })
  assert.equal(structured(back).content, 'from the agent and code')
  const listed = await client.callTool({ name: 'list_files', arguments: {} })
  assert.ok(structured(listed).entries.some((entry) => entry.name === name))
})

test('workspace files are resources an agent can list and read', async () => {
  const name = `resource-${transportName}.md`
  await client.callTool({ name: 'write_file', arguments: { path: name, content: '# attached' } })
  const { resources } = await client.listResources()
  const resource = resources.find((r) => r.name === name)
  assert.ok(resource, `${name} in ${resources.map((r) => r.name)}`)
  const { contents } = await client.readResource({ uri: resource.uri })
  assert.equal(contents[0].text, '# attached')
  const { resourceTemplates } = await client.listResourceTemplates()
  assert.match(resourceTemplates[0].uriTemplate, /^replhost:\/\/workspaces\/\{workspace\}\/files\//)
  await assert.rejects(client.readResource({ uri: 'replhost://workspaces/default/files/no-such-file' }),
    (error) => error.code === -32002)
})

test('run_command runs a stateless shell command', async () => {
  const result = await client.callTool({ name: 'run_command', arguments: { command: 'echo from sh; exit 4' } })
  assert.equal(result.isError, true)
  assert.equal(structured(result).exit_code, 4)
  assert.equal(structured(result).stdout, 'from sh\n')
})
