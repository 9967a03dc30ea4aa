// SPDX-License-Identifier: Apache-2.0
// E2B's published code interpreter SDK (@e2b/code-interpreter, unmodified) against a
// replhost-server started with --e2b-workspace: a sandbox whose code sees its workspace at
// /home/user, as the code in an E2B sandbox does. Pointed at replhost as e2b_sdk.test.mjs is
// (E2B_DEBUG=true, E2B_SANDBOX_URL); run by tst_e2bsdk with `node --test`, on a server whose
// E2B workspace was just made, so the first request of this script is the server's first.

import { Sandbox } from '@e2b/code-interpreter'
import assert from 'node:assert/strict'
import { test } from 'node:test'

assert.equal(process.env.E2B_DEBUG, 'true', 'E2B_DEBUG=true makes the SDK talk to E2B_SANDBOX_URL')
assert.ok(process.env.E2B_SANDBOX_URL, 'E2B_SANDBOX_URL must point at replhost-server')

const sandbox = await Sandbox.create()
const home = '/home/user'

// envd's file transfer as it is on the wire, the same routes the SDK's files.read/write use:
// GET and POST /files?path=, to see status codes and answers as they are.
async function writeFile(path, content) {
  const form = new FormData()
  form.append('file', new Blob([content]), 'upload')
  const response = await fetch(`${process.env.E2B_SANDBOX_URL}/files?path=${encodeURIComponent(path)}`,
    { method: 'POST', body: form })
  return { status: response.status, body: await response.json().catch(() => null) }
}
async function readFile(path) {
  const response = await fetch(`${process.env.E2B_SANDBOX_URL}/files?path=${encodeURIComponent(path)}`)
  return { status: response.status, text: await response.text() }
}

test('the first listing has the default Python and JavaScript contexts, in /home/user', async () => {
  const listed = await sandbox.listCodeContexts()
  const languages = listed.map((c) => c.language).sort()
  assert.deepEqual(languages, ['javascript', 'python'])
  for (const context of listed)
    assert.equal(context.cwd, home)
})

test('!pwd, !echo $HOME and os.getcwd() are /home/user', async () => {
  const execution = await sandbox.runCode('!pwd\n!echo $HOME\nimport os\nprint(os.getcwd())')
  assert.equal(execution.error, undefined)
  assert.deepEqual(execution.logs.stdout.join('').split('\n').filter(Boolean), [home, home, home])
  const js = await sandbox.runCode('process.cwd() + " " + process.env.HOME', { language: 'js' })
  assert.equal(js.text, `${home} ${home}`)
})

test('a context made with a cwd under /home/user starts there', async () => {
  await sandbox.runCode("import os\nos.makedirs('/home/user/project', exist_ok=True)")
  const context = await sandbox.createCodeContext({ language: 'python', cwd: `${home}/project` })
  assert.equal(context.cwd, `${home}/project`)
  assert.equal((await sandbox.runCode('import os\nos.getcwd()', { context })).text, `${home}/project`)
  await sandbox.removeCodeContext(context)
})

test('the SDK\'s files API reads and writes /tmp and the home', async () => {
  const info = await sandbox.files.write('/tmp/e2b-sdk.txt', 'through the SDK')
  assert.equal(info.path, '/tmp/e2b-sdk.txt')
  assert.equal(await sandbox.files.read('/tmp/e2b-sdk.txt'), 'through the SDK')
  await sandbox.files.write('/home/user/e2b-sdk.txt', 'home through the SDK')
  assert.equal((await sandbox.runCode("open('/home/user/e2b-sdk.txt').read()")).text, 'home through the SDK')
  await assert.rejects(sandbox.files.read('/etc/hostname'))
})

test('/tmp/x and ~/x are written and read back through the files routes and through code', async () => {
  for (const [path, seenAs] of [['/tmp/e2b-x.txt', '/tmp/e2b-x.txt'], ['~/e2b-x.txt', `${home}/e2b-x.txt`]]) {
    const written = await writeFile(path, `written to ${path}`)
    assert.equal(written.status, 200)
    assert.deepEqual(written.body.map((f) => f.path), [seenAs])
    assert.equal((await readFile(path)).text, `written to ${path}`)
    const read = await sandbox.runCode(`import os\nopen(os.path.expanduser(${JSON.stringify(path)})).read()`)
    assert.equal(read.text, `written to ${path}`)
  }
  await sandbox.runCode("open('/tmp/e2b-code.txt', 'w').write('from code')\n"
    + "import os\nopen(os.path.expanduser('~/e2b-code.txt'), 'w').write('home from code')")
  assert.equal((await readFile('/tmp/e2b-code.txt')).text, 'from code')
  assert.equal((await readFile('~/e2b-code.txt')).text, 'home from code')
  assert.equal((await readFile(`${home}/e2b-code.txt`)).text, 'home from code')
})

test('paths outside the sandbox\'s home and /tmp are refused', async () => {
  for (const path of ['/etc/hostname', '/home/user/../../etc/passwd', '/root/x', '/tmp/../etc/passwd']) {
    assert.equal((await readFile(path)).status, 403, path)
    assert.equal((await writeFile(path, 'x')).status, 403, path)
  }
})
