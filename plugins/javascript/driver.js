// SPDX-License-Identifier: Apache-2.0
'use strict';
// replhost worker driver for Node.js >= 18 (no dependencies beyond Node itself).
//
// Speaks worker protocol version 1: requests arrive as frames on fd 3, events leave as frames
// on fd 4, and user output goes untouched to fd 1/2.
//
// Cells run through the in-process inspector in V8's REPL mode (Runtime.evaluate with
// replMode), the mechanism behind browser consoles: top-level let/const/class persist and may be
// declared again in a later cell, top-level await works, and the completion value of the cell is
// its result, all without a JavaScript parser of our own.
//
// A cell that runs synchronously blocks the main thread, which then cannot read requests. So a
// worker thread owns fd 3: it forwards every request to the main thread and handles `interrupt`
// itself. It first offers the interrupt to the main thread, which ends an awaiting cell at once.
// If the main thread does not take it, it is busy in the cell's code, and the worker stops that
// code with Runtime.terminateExecution through its own inspector session; V8 cancels the
// termination once the interrupted task has unwound, so the context and its state survive.
// Termination unwinds whatever runs, Node's own bookkeeping included: it must never hit the
// driver, nor code that runs inside a callback Node entered with an async context (a timer, an
// immediate, an I/O or nextTick callback), whose unwinding leaves Node's async id stack corrupted
// and Node aborts. So the worker pauses the main thread with the debugger, looks at where it
// stopped (safePause()), and terminates from there or resumes and tries again later; and the two
// threads settle who ends an execution through a shared gate (see claim()). Code that cannot be
// stopped safely is left to the host, which kills the worker and says so.
//
// The TypeScript plugin runs this same driver with `--typescript=<compiler>`: each cell is first
// turned into JavaScript by the TypeScript compiler's transpileModule (loaded once per worker,
// from the path the plugin's probe found), which removes the types without checking them, as
// `ts-node --transpile-only` does. Everything after that is the JavaScript context's; positions
// in errors are mapped back to the cell's TypeScript through the compiler's source map.

const fs = require('fs');
const path = require('path');
const util = require('util');
const vm = require('vm');
const v8 = require('v8');
const net = require('net');
const inspector = require('inspector');
const asyncHooks = require('async_hooks');
const Module = require('module');
const { pathToFileURL } = require('url');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

const PROTOCOL = 1;
// The newest addition to protocol 1 this driver uses: input requests.
const REVISION = 2;
const MAX_FRAME = 64 * 1024 * 1024;
// Events above this are shrunk rather than sent, leaving headroom under the host's limit.
const SHRINK_AT = MAX_FRAME - 64 * 1024;

// Slots of the Int32Array both threads share. Executions are numbered by the reader, from 1.
const DONE_SEQ = 0;  // the last execution whose done was sent
const INTR_SEQ = 1;  // the last execution an interrupt was requested for
// Who ends the running execution: 0 while nobody has claimed it, -seq once the main thread has
// (it finishes by itself), seq once the reader has (it terminates the execution's JavaScript).
const GATE = 2;
const TERM_DONE = 3; // the last execution whose termination has completed
const SHARED_SLOTS = 4;

// How long the main thread has to take an interrupt before the reader terminates, and how often
// the reader looks again while the main thread runs code it cannot stop. An idle main thread
// takes an interrupt in microseconds, so this only delays stopping code that computes.
const TAKE_WAIT_MS = 50;
// How long one attempt waits for the main thread to pause before it checks why not. A main
// thread blocked in a native call pauses once it runs JavaScript again, however long that takes;
// but V8 drops a pause request that arrives where it cannot break, and then the attempt starts
// over rather than hold the gate.
const PAUSE_WAIT_MS = 100;
// Step-outs of the driver's own code towards the user's before giving up on one pause.
const MAX_STEPS = 16;
// Evaluated on the paused main thread: its current async id and the one the cell started with.
const ASYNC_STATE = 'globalThis[Symbol.for("replhost.driver")].asyncState()';
// Script URLs that tell where the main thread paused.
const INSPECTOR_URL = 'node:inspector';
const TICKS_URL = 'node:internal/process/task_queues';
// Names the main thread's wait in claim(), so the reader does not take it for the user's code.
const CLAIM_URL = 'replhost:claim';

if (isMainThread) {
    main();
} else {
    reader();
}

// ------------------------------------------------------------------------------ reader thread

function reader() {
    const shared = new Int32Array(workerData.shared);
    const DRIVER_URL = pathToFileURL(workerData.driver).href;
    let seq = 0;
    let runningId = null;
    let runningSeq = 0;
    let interruptedSeq = 0;

    const post = (message) => parentPort.postMessage(message);
    const fatal = (message) => post({ kind: 'fatal', message });

    // Frames are parsed from a list of chunks so a large frame is joined once, not per read.
    let chunks = [];
    let buffered = 0;
    let need = -1; // body length of the frame whose header has been read, or -1

    function take(n) {
        const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered);
        const head = all.subarray(0, n);
        const rest = all.subarray(n);
        chunks = rest.length ? [rest] : [];
        buffered = rest.length;
        return head;
    }

    function onData(chunk) {
        chunks.push(chunk);
        buffered += chunk.length;
        for (;;) {
            if (need < 0) {
                let nl = -1;
                let scanned = 0;
                for (const c of chunks) {
                    const i = c.indexOf(10);
                    if (i >= 0) {
                        nl = scanned + i;
                        break;
                    }
                    scanned += c.length;
                }
                if (nl < 0) {
                    if (buffered > 20) fatal('malformed frame header');
                    return;
                }
                const header = take(nl + 1).toString('latin1', 0, nl);
                if (!/^[0-9]{1,20}$/.test(header)) {
                    fatal('malformed frame header ' + JSON.stringify(header.slice(0, 32)));
                    return;
                }
                need = Number(header);
                if (need > MAX_FRAME) {
                    fatal('frame of ' + need + ' bytes exceeds the limit');
                    return;
                }
            }
            if (buffered < need) return;
            const body = take(need);
            need = -1;
            let req;
            try {
                req = JSON.parse(body.toString('utf8'));
            } catch (e) {
                fatal('frame is not valid JSON: ' + e.message);
                return;
            }
            if (req === null || typeof req !== 'object' || typeof req.type !== 'string') {
                fatal('frame is not a request object');
                return;
            }
            onRequest(req);
        }
    }

    function onRequest(req) {
        if (req.type === 'interrupt') {
            onInterrupt(req);
            return;
        }
        if (req.type === 'execute') {
            seq += 1;
            runningId = req.id;
            runningSeq = seq;
            post({ kind: 'request', req, seq });
            return;
        }
        post({ kind: 'request', req });
    }

    function onInterrupt(req) {
        // Only the running execution can be interrupted; a late interrupt for one that already
        // ended must not touch the next.
        if (runningId === null || req.target !== runningId) return;
        const target = runningSeq;
        if (Atomics.load(shared, DONE_SEQ) >= target || interruptedSeq === target) return;
        interruptedSeq = target;
        Atomics.store(shared, INTR_SEQ, target);
        post({ kind: 'interrupt', seq: target });
        setTimeout(() => attempt(target, false), TAKE_WAIT_MS);
    }

    function attempt(target, warned) {
        // The main thread claims the gate when it ends the execution, whether for this
        // interrupt or because the cell finished; then nothing is left to stop.
        if (Atomics.load(shared, DONE_SEQ) >= target) return;
        if (Atomics.compareExchange(shared, GATE, 0, target) !== 0) return;
        // Connected only while needed: the debugger slows the main thread down, and a session
        // still connected when the process exits makes Node print "Waiting for the debugger to
        // disconnect...".
        const session = new inspector.Session();
        try {
            session.connectToMainThread();
        } catch (e) {
            post({ kind: 'log', level: 'error', message: 'cannot reach the main thread to interrupt it: ' + e.message });
            release(target);
            return;
        }
        const urls = new Map();
        let over = false;
        let paused = false;
        let timer = null;
        const end = () => {
            over = true;
            clearTimeout(timer);
            try {
                session.disconnect();
            } catch (e) {
                // Already gone.
            }
        };
        const retry = (inCallback) => {
            end();
            release(target);
            if (inCallback === true && !warned) {
                warned = true;
                post({ kind: 'log', level: 'warning', message: 'the interrupted code runs in a callback '
                    + '(timer, I/O, nextTick) that cannot be stopped without corrupting Node.js; '
                    + 'waiting for it to return' });
            }
            setTimeout(() => attempt(target, warned), TAKE_WAIT_MS);
        };
        let steps = 0;
        session.on('Debugger.scriptParsed', (m) => urls.set(m.params.scriptId, m.params.url));
        // Answered only by a main thread that runs JavaScript or idles. The pause request,
        // sent before, takes effect right after the batch of messages it came in, so the second
        // answer comes after it unless V8 dropped it. The check must not run any JavaScript
        // itself: a pending pause would stop there, inside Node's dispatch of the reader's
        // messages, which then dispatches nothing more, the resume included.
        const check = (round) => {
            if (over || paused) return;
            session.post('Runtime.getHeapUsage', () => {
                if (over || paused) return;
                if (round < 2) check(round + 1);
                else retry(false);
            });
        };
        let looking = false;
        session.on('Debugger.paused', (m) => {
            if (over) return;
            if (looking) {
                // The evaluation below paused too; it must run.
                session.post('Debugger.resume');
                return;
            }
            paused = true;
            looking = true;
            clearTimeout(timer);
            const frames = m.params.callFrames.map((f) => ({
                name: f.functionName,
                url: urls.get(f.location.scriptId) || f.url || '',
            }));
            // A pause request that could not take effect at once stays armed as "pause on the
            // next call", and would stop the evaluation below, nested in this pause.
            session.post('Debugger.setSkipAllPauses', { skip: true });
            session.post('Runtime.evaluate', { expression: ASYNC_STATE, returnByValue: true, silent: true }, (e, r) => {
                looking = false;
                if (over) return;
                const state = !e && r && !r.exceptionDetails && r.result ? r.result.value : null;
                const verdict = safePause(frames, state);
                if (verdict === 'step' && steps < MAX_STEPS) {
                    // Paused in one of the driver's helpers the cell called (the global
                    // require): let it return to the cell.
                    steps += 1;
                    paused = false;
                    session.post('Debugger.setSkipAllPauses', { skip: false });
                    session.post('Debugger.stepOut');
                    timer = setTimeout(check, PAUSE_WAIT_MS, 1);
                    return;
                }
                if (verdict !== 'stop') {
                    session.post('Debugger.resume', () => retry(verdict === 'wait' && userFrame(frames[0])));
                    return;
                }
                // Pending while paused: the termination takes effect on resume, where the
                // frames were looked at. The reply comes once the terminated JavaScript has
                // unwound and V8 has cancelled the termination.
                session.post('Runtime.terminateExecution', (err) => {
                    end();
                    if (err) post({ kind: 'log', level: 'warning', message: 'terminateExecution: ' + err.message });
                    completed(target);
                });
                session.post('Debugger.resume');
            });
        });
        // Both at once: a main thread blocked in a native call (a loop of spawnSync whose
        // children the SIGINTs end) runs JavaScript only for moments, and the two are dispatched
        // together in the first of them.
        session.post('Debugger.enable', (e) => {
            if (e) {
                post({ kind: 'log', level: 'error', message: 'cannot pause the main thread: ' + e.message });
                end();
                release(target);
            }
        });
        session.post('Debugger.pause');
        timer = setTimeout(check, PAUSE_WAIT_MS, 1);
    }

    // May a termination unwind what the main thread was running where it paused (frames, top
    // first)? 'stop': yes. 'step': not yet, it paused in the driver's code (the global require,
    // say) on the way back to the user's. 'wait': no.
    // The unwinding must end at a boundary that stops it cleanly: the inspector evaluation that
    // runs the cell's synchronous code, or the job queue of promise reactions, with the user's
    // code above it. No async context may have been entered on the way (a callback, an
    // AsyncLocalStorage scope): Node would never see it exit and aborts. Node's own frames in
    // between (a require, the JavaScript half of execSync) lose their cleanup, as they do when
    // the node REPL's breakOnSigint stops a script; the driver's must not be cut short.
    function safePause(frames, state) {
        if (frames.length === 0) return 'wait';
        // claim() waiting in its own evaluation, for exactly this.
        if (frames[0].url === CLAIM_URL) return 'stop';
        if (!Array.isArray(state)) return 'wait';
        const driver = (f) => f.url === DRIVER_URL || f.url === workerData.driver || f.url === CLAIM_URL;
        const boundary = frames.findIndex((f) => f.url === INSPECTOR_URL && f.name === 'post');
        let above;
        if (boundary >= 0) {
            if (state[0] !== state[1]) return 'wait';
            above = frames.slice(0, boundary);
        } else {
            const last = frames[frames.length - 1];
            if (frames.some(driver) || state[0] !== 0) return 'wait';
            if (!userFrame(last) && !(last.url === TICKS_URL && last.name === 'processTicksAndRejections'))
                return 'wait';
            above = frames;
        }
        if (!above.some(userFrame)) return 'wait';
        return above.some(driver) ? 'step' : 'stop';
    }

    function userFrame(f) {
        return !f.url.startsWith('node:') && f.url !== DRIVER_URL && f.url !== workerData.driver && f.url !== CLAIM_URL;
    }

    function release(target) {
        Atomics.compareExchange(shared, GATE, target, 0);
        Atomics.notify(shared, GATE);
    }

    function completed(target) {
        Atomics.store(shared, TERM_DONE, target);
        Atomics.notify(shared, GATE);
        post({ kind: 'interrupt', seq: target });
    }

    parentPort.once('message', (start) => {
        let socket;
        try {
            socket = new net.Socket({ fd: workerData.fd, readable: true, writable: false });
        } catch (e) {
            fatal('cannot read requests: ' + e.message);
            return;
        }
        socket.on('data', onData);
        socket.on('end', () => post({ kind: 'eof' }));
        socket.on('error', (e) => fatal('cannot read requests: ' + e.message));
        if (start.rest && start.rest.length) onData(Buffer.from(start.rest));
    });
}

// -------------------------------------------------------------------------------- main thread

function main() {
    // The host sends SIGINT to the whole process group with every interrupt; it stops the cell's
    // foreground children, and the in-band interrupt stops the cell. Node's default for SIGINT is
    // to exit, and a listener is the only way to keep it: Node cannot ignore a signal at delivery
    // the way SIG_IGN does, so a listener that acted on it could not tell a late SIGINT of a
    // finished execution from one for the next.
    process.on('SIGINT', () => {});

    const DISPLAY_MIMES = ['text/plain', 'text/html', 'text/markdown', 'text/latex', 'image/svg+xml',
        'image/png', 'image/jpeg', 'application/json'];
    const BINARY_MIMES = new Set(['image/png', 'image/jpeg', 'image/gif', 'application/pdf']);
    const RICH_METHODS = [
        ['_toHtml', 'text/html'], ['_toSvg', 'image/svg+xml'], ['_toPng', 'image/png'],
        ['_toJpeg', 'image/jpeg'], ['_toMarkdown', 'text/markdown'], ['_toLatex', 'text/latex'],
        ['_toJson', 'application/json'],
    ];
    const KEYWORDS = ['await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger',
        'default', 'delete', 'do', 'else', 'export', 'extends', 'false', 'finally', 'for', 'function',
        'if', 'import', 'in', 'instanceof', 'let', 'new', 'null', 'return', 'static', 'super',
        'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield',
        'async', 'of'];
    // Same length as "import", so column numbers in error messages stay right.
    const IMPORT_HELPER = '$rhImp';
    const HOOK = Symbol.for('replhost.driver');
    const RESULT_INSPECT = { showProxy: true };
    const GROUP = 'replhost';
    const DRIVER_FILE = __filename;

    const UNINITIALIZED = Symbol('uninitialized');
    const CELL_FRAME = /^\s+at (?:.*[ (])?<cell-[^>]*>:\d+:\d+\)?$/;
    const sleeper = new Int32Array(new SharedArrayBuffer(4));

    // TypeScript: the compiler, and each cell's source map by label, for errors of any later cell
    // that runs the cell's functions.
    const compilerArgument = process.argv.slice(2).find((a) => a.startsWith('--typescript='));
    let typescript = null;
    const cellMaps = new Map();

    let fds;
    let shared;
    let readerThread;
    let session;
    let out;
    let err;
    let outWrite;
    let errWrite;
    let markPrefix = '';
    let markSeq = 0;
    let cur = null;            // the running execution
    let hostRevision = 0;      // what the host's init names
    let input = null;          // the running cell's process.stdin, when its client can answer
    let cellCounter = 0;
    const queue = [];          // events waiting for output still buffered in a stream
    let lastValue;
    let lastError;
    let captured;
    let capturedAny = false;
    const requires = new Map();
    const importers = new Map();
    const baseline = new Map();
    const lazyBuiltins = new Set();

    start();

    function start() {
        fds = setupFds();
        if (compilerArgument !== undefined) typescript = loadTypeScript(compilerArgument.slice(13));
        const sharedBuffer = new SharedArrayBuffer(4 * SHARED_SLOTS);
        shared = new Int32Array(sharedBuffer);
        // Started first: it boots while this thread sets up and waits for init.
        readerThread = new Worker(__filename, {
            workerData: { fd: fds.req, shared: sharedBuffer, driver: __filename },
            stdin: false, stdout: true, stderr: true,
            // Options meant for the user's code (a --require hook, say) have no business in
            // the reader.
            execArgv: [],
        });

        session = new inspector.Session();
        session.connect();

        out = process.stdout;
        err = process.stderr;
        // Saved now: user code may replace process.stdout.write, but marks must go through the
        // stream itself to stay behind output it still holds.
        outWrite = out.write;
        errWrite = err.write;

        installGlobals();
        for (const name of Object.getOwnPropertyNames(globalThis)) {
            const d = Object.getOwnPropertyDescriptor(globalThis, name);
            baseline.set(name, !!(d && d.enumerable));
        }
        // Like the node REPL; the driver's own path is nothing the user's code should see.
        process.argv.length = 1;

        process.on('uncaughtException', (e, origin) => {
            reportUncaught(e, origin === 'unhandledRejection' ? 'Uncaught (in promise)' : 'Uncaught');
        });
        process.on('unhandledRejection', (reason) => reportUncaught(reason, 'Uncaught (in promise)'));

        const init = readInitSync();
        handleInit(init.req);
        readerThread.on('message', onMessage);
        readerThread.on('error', (e) => fatal('request reader failed: ' + describe(e)));
        readerThread.on('exit', (code) => fatal('request reader exited with code ' + code));
        readerThread.postMessage({ rest: init.rest });
    }

    // ----------------------------------------------------------------------------- transport

    function openDup(fd, flags) {
        // A fresh open file description of the same pipe: Node opens files close-on-exec, so
        // children do not inherit it, and it stays blocking whatever libuv does to fd `fd`.
        try {
            return fs.openSync('/proc/self/fd/' + fd, flags);
        } catch (e) {
            return -1;
        }
    }

    function setupFds() {
        const C = fs.constants;
        const req = openDup(3, C.O_RDONLY);
        const evt = openDup(4, C.O_WRONLY);
        const r = { req: 3, evt: 4, out: 1, err: 2 };
        if (req >= 0 && evt >= 0) {
            r.req = req;
            r.evt = evt;
            // The protocol fds must not leak into user child processes.
            fs.closeSync(3);
            fs.closeSync(4);
        } else {
            if (req >= 0) fs.closeSync(req);
            if (evt >= 0) fs.closeSync(evt);
        }
        const o = openDup(1, C.O_WRONLY | C.O_APPEND);
        const e = openDup(2, C.O_WRONLY | C.O_APPEND);
        if (o >= 0) r.out = o;
        if (e >= 0) r.err = e;
        return r;
    }

    function writeAllSync(fd, buf) {
        let off = 0;
        while (off < buf.length) {
            try {
                off += fs.writeSync(fd, buf, off, buf.length - off);
            } catch (e) {
                if (e.code !== 'EAGAIN') throw e;
                // A non-blocking fd (only without /proc) whose pipe is full: wait for the host.
                Atomics.wait(sleeper, 0, 0, 1);
            }
        }
    }

    function readInitSync() {
        let data = Buffer.alloc(0);
        const chunk = Buffer.alloc(65536);
        let need = -1;
        let start = 0;
        for (;;) {
            if (need < 0) {
                const nl = data.indexOf(10);
                if (nl >= 0) {
                    const header = data.toString('latin1', 0, nl);
                    if (!/^[0-9]{1,20}$/.test(header) || Number(header) > MAX_FRAME)
                        fatal('malformed frame header');
                    need = Number(header);
                    start = nl + 1;
                } else if (data.length > 20) {
                    fatal('malformed frame header');
                }
            }
            if (need >= 0 && data.length >= start + need) break;
            let n;
            try {
                n = fs.readSync(fds.req, chunk, 0, chunk.length, null);
            } catch (e) {
                if (e.code === 'EAGAIN') {
                    Atomics.wait(sleeper, 0, 0, 1);
                    continue;
                }
                fatal('cannot read requests: ' + e.message);
            }
            if (n === 0) {
                if (data.length) fatal('end of input inside a frame');
                process.exit(0);
            }
            data = Buffer.concat([data, chunk.subarray(0, n)]);
        }
        let req;
        try {
            req = JSON.parse(data.toString('utf8', start, start + need));
        } catch (e) {
            fatal('frame is not valid JSON: ' + e.message);
        }
        if (req === null || typeof req !== 'object' || req.type !== 'init')
            fatal('first request must be init');
        return { req, rest: data.subarray(start + need) };
    }

    function fixSurrogates(key, value) {
        return typeof value === 'string' ? toWellFormed(value) : value;
    }

    function toWellFormed(s) {
        return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
    }

    function shrink(value, limit) {
        if (typeof value === 'string') {
            return value.length > limit
                ? value.slice(0, limit) + '\n[truncated by replhost: ' + value.length + ' characters]'
                : value;
        }
        if (Array.isArray(value)) return value.slice(0, 10000).map((v) => shrink(v, limit));
        if (value !== null && typeof value === 'object') {
            let v = value;
            if (typeof v['text/plain'] === 'string' && Object.keys(v).length > 1) v = { 'text/plain': v['text/plain'] };
            const r = {};
            for (const k of Object.keys(v)) r[k] = shrink(v[k], limit);
            return r;
        }
        return value;
    }

    function encode(ev) {
        let text;
        try {
            text = JSON.stringify(ev);
        } catch (e) {
            // Values are checked before they go into events; this is the driver's own slip.
            text = JSON.stringify({ type: 'log', level: 'error', message: 'unencodable ' + ev.type + ' event: ' + describe(e) });
        }
        // Lone surrogates come out as \udXXX escapes, which JSON readers may reject.
        if (text.includes('\\ud')) text = JSON.stringify(ev, fixSurrogates);
        return text;
    }

    function send(ev) {
        let text = encode(ev);
        let size = Buffer.byteLength(text);
        if (size > SHRINK_AT) {
            const original = size;
            text = encode(shrink(ev, 1 << 20));
            size = Buffer.byteLength(text);
            if (size > SHRINK_AT) {
                text = encode(shrink(ev, 1 << 10));
                size = Buffer.byteLength(text);
            }
            send({ type: 'log', level: 'warning', message: ev.type + ' event of ' + original +
                ' bytes exceeds the frame limit; sent without rich data and with long texts cut' });
        }
        try {
            writeAllSync(fds.evt, Buffer.from(size + '\n' + text));
        } catch (e) {
            // Nobody reads our events any more: the host is gone.
            hardExit(1);
        }
    }

    function backlog() {
        return out.writableLength > 0 || err.writableLength > 0;
    }

    function usable(stream) {
        return !stream.destroyed && !stream.writableEnded && !stream.errored;
    }

    function writeMarkSync() {
        markSeq += 1;
        const m = Buffer.from(markPrefix + markSeq + '\x07');
        for (const fd of [fds.out, fds.err]) {
            try {
                writeAllSync(fd, m);
            } catch (e) {
                // A closed stream cannot carry the mark; the host times the barrier out.
            }
        }
        return markSeq;
    }

    // Sends an event, after a mark when `marked`. Output Node still buffers in process.stdout
    // or process.stderr (a full pipe) must reach the pipe before the mark, so then the mark goes
    // through the streams and this event, and every event after it, waits for their callbacks.
    function emit(ev, marked, after) {
        if (queue.length === 0 && !(marked && backlog())) {
            if (marked) ev.mark = writeMarkSync();
            send(ev);
            if (after) after();
            return;
        }
        queue.push({ ev, marked, after });
        if (queue.length === 1) drain();
    }

    function drain() {
        while (queue.length) {
            const item = queue[0];
            if (item.marked && backlog()) {
                markSeq += 1;
                item.ev.mark = markSeq;
                const m = markPrefix + markSeq + '\x07';
                let pending = 2;
                const next = () => {
                    if (--pending > 0) return;
                    queue.shift();
                    send(item.ev);
                    if (item.after) item.after();
                    drain();
                };
                for (const [stream, write, fd] of [[out, outWrite, fds.out], [err, errWrite, fds.err]]) {
                    if (usable(stream)) {
                        try {
                            write.call(stream, m, next);
                            continue;
                        } catch (e) {
                            // Fall through to the file descriptor.
                        }
                    }
                    try {
                        writeAllSync(fd, Buffer.from(m));
                    } catch (e) {
                        // See writeMarkSync.
                    }
                    next();
                }
                return;
            }
            queue.shift();
            if (item.marked) item.ev.mark = writeMarkSync();
            send(item.ev);
            if (item.after) item.after();
        }
    }

    // Leaves at once: no 'exit' listeners of the user's, which could block or print.
    function hardExit(code) {
        (typeof process.reallyExit === 'function' ? process.reallyExit : process.exit)(code);
    }

    function log(level, message) {
        emit({ type: 'log', level, message: String(message) }, false);
    }

    function fatal(message) {
        try {
            send({ type: 'log', level: 'error', message });
        } finally {
            hardExit(2);
        }
    }

    // --------------------------------------------------------------------------- requests

    function onMessage(m) {
        try {
            switch (m.kind) {
            case 'request':
                dispatch(m.req, m.seq);
                break;
            case 'interrupt':
                interruptExecution(m.seq);
                break;
            case 'log':
                log(m.level, m.message);
                break;
            case 'eof':
                shutdown(null);
                break;
            case 'fatal':
                fatal(m.message);
                break;
            default:
                break;
            }
        } catch (e) {
            // Never lose the worker to a driver bug.
            try {
                log('error', 'driver failure: ' + describe(e));
            } catch (e2) {
                // Nothing more to do.
            }
        }
    }

    function dispatch(req, seq) {
        switch (req.type) {
        case 'execute':
            execute(req, seq);
            return;
        case 'complete':
            reply(req, () => complete(req));
            return;
        case 'variables':
            reply(req, () => variables(req));
            return;
        case 'shutdown':
            shutdown(req);
            return;
        case 'init':
            emit({ type: 'error_reply', id: req.id, reason: 'already initialized' }, false);
            return;
        case 'input_reply':
            answerInput(req);
            return;
        default:
            emit({ type: 'error_reply', id: req.id, reason: 'unknown request type' }, false);
        }
    }

    function reply(req, fn) {
        let ev;
        try {
            ev = fn();
        } catch (e) {
            ev = { type: 'error_reply', reason: describe(e) };
        } finally {
            releaseObjects();
        }
        ev.id = req.id;
        emit(ev, false);
    }

    function handleInit(req) {
        const nonce = req.mark_nonce;
        if (typeof nonce !== 'string' || !/^[0-9A-Fa-f]{1,64}$/.test(nonce))
            fatal('init carries no valid mark_nonce');
        markPrefix = '\x1b]5253;rh;' + nonce + ';';
        if (Number.isInteger(req.revision)) hostRevision = Math.min(req.revision, REVISION);
        installInput();
        emit({
            type: 'hello', id: req.id, protocol: PROTOCOL, language: typescript ? 'typescript' : 'javascript',
            language_version: typescript ? typescript.version : process.versions.node,
            implementation: typescript ? 'Node.js ' + process.versions.node : 'Node.js',
            executable: process.execPath, pid: process.pid,
            capabilities: {
                interrupt: ['inband'], complete: true, variables: true,
                display: DISPLAY_MIMES.slice(),
            },
        }, false);
    }

    function shutdown(req) {
        if (req) emit({ type: 'shutdown_reply', id: req.id }, false);
        // process.exit runs the user's 'exit' listeners, as a REPL's exit does.
        process.exit(0);
    }

    // ------------------------------------------------------------------------- inspector

    function postSync(method, params) {
        let result;
        let error;
        let called = false;
        session.post(method, params, (e, r) => {
            called = true;
            error = e;
            result = r;
        });
        if (!called) throw new Error(method + ' did not answer synchronously');
        if (error) throw error;
        return result;
    }

    // The live value behind a RemoteObject: primitives travel by value, everything else is
    // handed over by a function that runs in the context and calls back into the driver.
    function liveValue(remote) {
        if (!remote) return undefined;
        if (remote.objectId !== undefined) {
            capturedAny = true;
            captured = undefined;
            postSync('Runtime.callFunctionOn', {
                objectId: remote.objectId,
                functionDeclaration: 'function () { "use strict"; globalThis[Symbol.for("replhost.driver")].capture(this); }',
                silent: true,
            });
            const v = captured;
            captured = undefined;
            return v;
        }
        if (remote.type === 'undefined') return undefined;
        if ('unserializableValue' in remote) {
            const u = remote.unserializableValue;
            if (remote.type === 'bigint') return BigInt(u.slice(0, -1));
            if (u === '-0') return -0;
            if (u === 'NaN') return NaN;
            if (u === 'Infinity') return Infinity;
            if (u === '-Infinity') return -Infinity;
        }
        return remote.value;
    }

    function releaseObjects() {
        if (!capturedAny) return;
        capturedAny = false;
        try {
            postSync('Runtime.releaseObjectGroup', { objectGroup: GROUP });
        } catch (e) {
            log('warning', 'releaseObjectGroup: ' + e.message);
        }
    }

    // --------------------------------------------------------------------------- globals

    function currentCwd() {
        try {
            return process.cwd();
        } catch (e) {
            try {
                return fs.readlinkSync('/proc/self/cwd').replace(/ \(deleted\)$/, '');
            } catch (e2) {
                return null;
            }
        }
    }

    function requireFor(cwd) {
        let r = requires.get(cwd);
        if (!r) {
            r = Module.createRequire(path.join(cwd, '[repl]'));
            requires.set(cwd, r);
        }
        return r;
    }

    // The "import" entry of a package's "exports" (exact subpaths, no patterns), looked up from
    // the cwd as the ES module resolver does; null when the package has no "exports".
    function packageImportTarget(cwd, specifier) {
        const m = /^((?:@[^/]+\/)?[^/@][^/]*)(\/.*)?$/.exec(specifier);
        if (!m) return null;
        const subpath = '.' + (m[2] || '');
        const pick = (t) => {
            if (typeof t === 'string') return t;
            if (Array.isArray(t)) {
                for (const x of t) {
                    const r = pick(x);
                    if (r) return r;
                }
            } else if (t && typeof t === 'object') {
                // In the package's order, as the resolver takes conditions.
                for (const key of Object.keys(t)) {
                    if (key !== 'node' && key !== 'import' && key !== 'default') continue;
                    const r = pick(t[key]);
                    if (r) return r;
                }
            }
            return null;
        };
        for (let dir = cwd; ; dir = path.dirname(dir)) {
            const packageDir = path.join(dir, 'node_modules', m[1]);
            let manifest;
            try {
                manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
            } catch (e) {
                manifest = undefined;
            }
            if (manifest !== undefined) {
                let exportsField = manifest && manifest.exports;
                if (exportsField === undefined || exportsField === null) return null;
                const bySubpath = typeof exportsField === 'object' && !Array.isArray(exportsField)
                    && Object.keys(exportsField).some((k) => k.startsWith('.'));
                if (bySubpath) exportsField = exportsField[subpath];
                else if (subpath !== '.') exportsField = undefined;
                const target = pick(exportsField);
                return target && target.startsWith('./') ? pathToFileURL(path.join(packageDir, target)).href : null;
            }
            if (dir === path.dirname(dir)) return null;
        }
    }

    function resolveForImport(cwd, specifier) {
        if (typeof specifier !== 'string') return specifier;
        if (/^\.{0,2}\//.test(specifier)) return pathToFileURL(path.resolve(cwd, specifier)).href;
        if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(specifier) || Module.builtinModules.includes(specifier))
            return specifier;
        try {
            const target = packageImportTarget(cwd, specifier);
            if (target) return target;
        } catch (e) {
            // Fall back to the CommonJS rules.
        }
        try {
            return pathToFileURL(requireFor(cwd).resolve(specifier)).href;
        } catch (e) {
            return specifier;
        }
    }

    function importerFor(cwd) {
        let fn = importers.get(cwd);
        if (fn) return fn;
        const loader = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
        if (loader !== undefined) {
            // Node's own loader with the cwd as referrer: bare specifiers resolve from the cwd's
            // node_modules with the "import" conditions, exactly as in a module there.
            const script = new vm.Script('(function (s, o) { return o === undefined ? import(s) : import(s, o); })', {
                filename: path.join(cwd, '[repl]'),
                importModuleDynamically: loader,
            });
            const f = script.runInThisContext();
            fn = (s, o) => {
                const emitWarning = process.emitWarning;
                // Node flags this loader as experimental; the warning would land in the
                // user's output although the user asked for nothing experimental.
                process.emitWarning = function (warning, ...rest) {
                    if (String(warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return undefined;
                    return emitWarning.call(this, warning, ...rest);
                };
                try {
                    return f(s, o);
                } finally {
                    process.emitWarning = emitWarning;
                }
            };
        } else {
            // Older Node: resolve paths and packages from the cwd ourselves (a package's
            // "exports" with the "import" conditions, else the CommonJS rules).
            fn = (s, o) => (o === undefined ? import(resolveForImport(cwd, s)) : import(resolveForImport(cwd, s), o));
        }
        importers.set(cwd, fn);
        return fn;
    }

    function defineHidden(name, value) {
        Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
    }

    // A global the driver keeps up to date until the user assigns to it (as the node REPL
    // does for `_`).
    function defineTracked(name, get) {
        Object.defineProperty(globalThis, name, {
            configurable: true, enumerable: false, get,
            set(v) {
                Object.defineProperty(globalThis, name, { value: v, writable: true, configurable: true, enumerable: true });
            },
        });
    }

    function installGlobals() {
        Object.defineProperty(globalThis, HOOK, {
            value: Object.freeze({ capture(v) { captured = v; }, uninitialized: UNINITIALIZED, shared, asyncState }),
            configurable: false, enumerable: false, writable: false,
        });
        // require, relative to the current directory whatever it is when called.
        defineTracked('require', () => {
            const cwd = currentCwd();
            return cwd ? requireFor(cwd) : require;
        });
        // `module`, as in the node REPL, for code written for a CommonJS file.
        const replModule = new Module('<repl>');
        replModule.filename = path.join(currentCwd() || '/', '<repl>');
        try {
            replModule.paths = Module._nodeModulePaths(currentCwd() || '/');
        } catch (e) {
            // Not part of Node's documented API; the module works without lookup paths.
        }
        replModule.loaded = true;
        defineHidden('module', replModule);
        defineHidden(IMPORT_HELPER, function importFromCwd(specifier, options) {
            return importerFor(currentCwd() || '/')(specifier, options);
        });
        defineHidden('display', display);
        defineTracked('_', () => lastValue);
        defineTracked('_error', () => lastError);
        // Built-in modules as lazily loaded globals, as in the node REPL. They stay accessors
        // after loading, so assigning one (`var fs = 3`) still makes an ordinary variable.
        for (const name of Module.builtinModules) {
            if (name.startsWith('_') || name.includes('/') || name in globalThis) continue;
            lazyBuiltins.add(name);
            let loaded;
            defineTracked(name, () => {
                if (loaded === undefined) loaded = require(name);
                return loaded;
            });
        }
    }

    function setLast(value) {
        lastValue = value;
    }

    // --------------------------------------------------------------------------- rendering

    function describe(e) {
        try {
            if (e instanceof Error) return (e.name || 'Error') + ': ' + e.message;
            return util.inspect(e);
        } catch (e2) {
            return '<unprintable>';
        }
    }

    function isJsonable(value) {
        const seen = new Set();
        let budget = 10000;
        let chars = 1 << 20;
        const walk = (v, depth) => {
            switch (typeof v) {
            case 'string':
                chars -= v.length;
                return chars >= 0;
            case 'boolean':
                return true;
            case 'number':
                // -0 would come back as 0.
                return Number.isFinite(v) && !Object.is(v, -0);
            case 'object': {
                if (v === null) return true;
                if (depth > 64 || --budget < 0 || seen.has(v) || util.types.isProxy(v)) return false;
                seen.add(v);
                let ok;
                if (Array.isArray(v)) {
                    ok = Object.getPrototypeOf(v) === Array.prototype;
                    for (let i = 0; ok && i < v.length; i++) {
                        const d = Object.getOwnPropertyDescriptor(v, i);
                        ok = !!d && 'value' in d && walk(d.value, depth + 1);
                    }
                } else {
                    const proto = Object.getPrototypeOf(v);
                    ok = (proto === Object.prototype || proto === null) && typeof v.toJSON !== 'function'
                        && Object.getOwnPropertySymbols(v).length === 0;
                    if (ok) {
                        for (const k of Object.keys(v)) {
                            const d = Object.getOwnPropertyDescriptor(v, k);
                            chars -= k.length;
                            // Getters could have side effects; undefined members vanish in JSON.
                            if (!d || !('value' in d) || !walk(d.value, depth + 1)) {
                                ok = false;
                                break;
                            }
                        }
                    }
                }
                seen.delete(v);
                return ok;
            }
            default:
                return false;
            }
        };
        try {
            return walk(value, 0);
        } catch (e) {
            return false;
        }
    }

    // MIME bundle value: text as text, binary as base64, JSON as a JSON value; undefined to skip.
    function normalize(mime, value) {
        if (value === undefined || value === null) return undefined;
        if (mime === 'application/json' || mime.endsWith('+json')) return isJsonable(value) ? value : undefined;
        const textual = mime.startsWith('text/') || mime === 'image/svg+xml' || !(BINARY_MIMES.has(mime) || mime.startsWith('image/'));
        if (value instanceof ArrayBuffer) value = Buffer.from(value);
        if (ArrayBuffer.isView(value)) {
            const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
            return textual ? b.toString('utf8') : b.toString('base64');
        }
        if (typeof value === 'string') return value;
        if (textual) return String(value);
        return isJsonable(value) ? value : undefined;
    }

    function rich(value, data) {
        const toMime = value._toMime;
        if (typeof toMime === 'function') {
            const r = toMime.call(value);
            if (r && typeof r === 'object') {
                for (const mime of Object.keys(r)) {
                    const v = normalize(mime, r[mime]);
                    if (v !== undefined) data[mime] = v;
                }
            }
        }
        for (const [method, mime] of RICH_METHODS) {
            if (mime in data) continue;
            const f = value[method];
            if (typeof f !== 'function') continue;
            const v = normalize(mime, f.call(value));
            if (v !== undefined) data[mime] = v;
        }
    }

    function bundle(value) {
        const data = {};
        const metadata = {};
        if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
            try {
                rich(value, data);
            } catch (e) {
                log('warning', 'rich display failed: ' + describe(e));
            }
        }
        if (typeof data['text/plain'] !== 'string') data['text/plain'] = util.inspect(value, RESULT_INSPECT);
        if (!('application/json' in data) && data['text/plain'].length <= (1 << 20) && isJsonable(value))
            data['application/json'] = value;
        return { data, metadata };
    }

    // display(value) shows a value as a result would be shown; display(mime, data[, metadata])
    // shows raw data of one MIME type (a Buffer or base64 string for images).
    function display(...args) {
        let data;
        let metadata = {};
        if (args.length >= 2 && typeof args[0] === 'string' && args[0].includes('/')) {
            const mime = args[0];
            const v = normalize(mime, args[1]);
            if (v === undefined) throw new TypeError('display: cannot show ' + util.inspect(args[1], { depth: 0 }) + ' as ' + mime);
            data = { [mime]: v };
            if (args[2] && typeof args[2] === 'object' && isJsonable(args[2])) metadata = args[2];
        } else {
            if (args.length !== 1) throw new TypeError('display(value) or display(mime, data[, metadata])');
            ({ data, metadata } = bundle(args[0]));
        }
        if (!cur) return;
        emit({ type: 'display', id: cur.id, data, metadata }, true);
    }

    function typeName(v) {
        if (v === null) return 'null';
        const t = typeof v;
        if (t === 'function') {
            try {
                return /^class\b/.test(Function.prototype.toString.call(v)) ? 'class' : 'function';
            } catch (e) {
                return 'function';
            }
        }
        if (t !== 'object') return t;
        try {
            if (util.types.isProxy(v)) return 'Proxy';
            const proto = Object.getPrototypeOf(v);
            if (proto === null) return 'Object';
            const c = proto.constructor;
            if (typeof c === 'function' && typeof c.name === 'string' && c.name) return c.name;
        } catch (e) {
            // Fall through.
        }
        return Object.prototype.toString.call(v).slice(8, -1);
    }

    function shortRepr(v, limit) {
        let text;
        try {
            let keys = 0;
            if (v !== null && typeof v === 'object' && !util.types.isProxy(v) && !Array.isArray(v)
                && !ArrayBuffer.isView(v)) {
                keys = Object.keys(v).length;
            }
            text = keys > 1000
                ? typeName(v) + ' {\u2026} (' + keys + ' keys)'
                : util.inspect(v, {
                    depth: 1, breakLength: Infinity, compact: true, maxArrayLength: 20,
                    maxStringLength: Math.max(limit, 8),
                });
        } catch (e) {
            text = '<inspect failed: ' + describe(e) + '>';
        }
        if (text.length > limit) text = text.slice(0, Math.max(limit - 1, 0)) + '\u2026';
        return text;
    }

    // ---------------------------------------------------------------------------- errors

    function stripStack(stack) {
        const lines = String(stack).split('\n');
        let last = -1;
        for (let i = 0; i < lines.length; i++) {
            if (CELL_FRAME.test(lines[i])) last = i;
        }
        if (last >= 0) {
            // Everything below the outermost cell frame is the driver calling the cell.
            return lines.filter((l, i) => i <= last || !/^\s+at /.test(l)).join('\n');
        }
        return lines.filter((l) => !/^\s+at /.test(l) || !(l.includes(DRIVER_FILE) || l.includes('node:inspector'))).join('\n');
    }

    // Where the parser stopped (zero-based line and column of `source`), as node prints it for a
    // script.
    function syntaxErrorTraceback(label, source, line, column, message) {
        const text = String(source || '').split(/\r?\n/)[line];
        const traceback = [(label || '<cell>') + ':' + (line + 1)];
        if (text !== undefined) {
            traceback.push(text);
            traceback.push(' '.repeat(Math.min(column, text.length)) + '^');
        }
        traceback.push('', message);
        return traceback;
    }

    function errorEvent(value, details, prefix) {
        let ename;
        let evalue;
        let traceback;
        const isError = value instanceof Error || (value !== null && typeof value === 'object'
            && typeof value.stack === 'string' && typeof value.message === 'string');
        if (isError) {
            ename = String(value.name || typeName(value));
            evalue = String(value.message);
            const stack = String(value.stack);
            const stripped = mapCellPositions(stripStack(stack));
            if (stripped !== stack) {
                try {
                    value.stack = stripped;
                } catch (e) {
                    // A frozen error keeps its stack; the text below is stripped anyway.
                }
            }
            // A syntax error of the cell itself is thrown by the evaluation, before any frame of
            // user code: its first frame is the driver's.
            const firstFrame = stack.split('\n').find((l) => /^\s+at /.test(l));
            const compileError = value instanceof SyntaxError && details && details.source !== undefined
                && (!firstFrame || firstFrame.includes('node:inspector') || firstFrame.includes(DRIVER_FILE));
            if (compileError) {
                traceback = syntaxErrorTraceback(details.label, details.source, details.lineNumber || 0,
                    details.columnNumber || 0, ename + ': ' + evalue);
            } else {
                let text;
                try {
                    text = util.inspect(value);
                } catch (e) {
                    text = stripped;
                }
                if (!text.includes(evalue)) text = stripped;
                traceback = text.split('\n');
            }
        } else {
            ename = typeof value;
            try {
                evalue = util.inspect(value);
            } catch (e) {
                evalue = '<unprintable>';
            }
            traceback = ['Uncaught ' + evalue];
        }
        if (prefix && traceback.length) traceback[0] = prefix + ' ' + traceback[0];
        return { type: 'error', ename, evalue, traceback };
    }

    function reportUncaught(value, prefix) {
        if (cur && !cur.finishing) {
            const ev = errorEvent(value, null, prefix);
            ev.id = cur.id;
            emit(ev, true);
            if (cur.status === 'ok') cur.status = 'error';
            lastError = value;
            return;
        }
        // Between executions there is nobody to tell but stderr, like node itself.
        const text = errorEvent(value, null, prefix).traceback.join('\n');
        try {
            errWrite.call(err, text + '\n');
        } catch (e) {
            // stderr is gone.
        }
    }

    // ------------------------------------------------------------------------- execution

    function setEnvLayer(layer, errors) {
        if (!layer || typeof layer !== 'object') return;
        const sets = layer.set && typeof layer.set === 'object' ? layer.set : {};
        for (const key of Object.keys(sets)) {
            try {
                const v = sets[key];
                if (v === null || v === undefined) delete process.env[key];
                else process.env[key] = String(v);
            } catch (e) {
                errors.push(e);
            }
        }
        for (const key of Array.isArray(layer.unset) ? layer.unset : []) {
            try {
                delete process.env[key];
            } catch (e) {
                errors.push(e);
            }
        }
    }

    function applyEnv(env, errors) {
        const saved = new Map();
        if (!env || typeof env !== 'object') return saved;
        setEnvLayer(env.context, errors);
        const layer = env.exec;
        if (layer && typeof layer === 'object') {
            const keys = Object.keys(layer.set && typeof layer.set === 'object' ? layer.set : {})
                .concat(Array.isArray(layer.unset) ? layer.unset : []);
            for (const key of keys) {
                if (typeof key === 'string' && !saved.has(key))
                    saved.set(key, Object.prototype.hasOwnProperty.call(process.env, key) ? process.env[key] : undefined);
            }
            setEnvLayer(layer, errors);
        }
        return saved;
    }

    function restoreEnv(saved) {
        for (const [key, value] of saved) {
            try {
                if (value === undefined) delete process.env[key];
                else process.env[key] = value;
            } catch (e) {
                // Keys that could not be set could not be changed either.
            }
        }
    }

    function execute(req, seq) {
        const id = req.id;
        const count = req.execution_count;
        if (typeof req.code !== 'string') {
            emit({ type: 'error_reply', id, reason: 'execute needs a string code' }, false);
            return;
        }
        cellCounter += 1;
        const exec = {
            id, count, seq, status: 'ok', saved: new Map(), t0: performance.now(),
            finishing: false, interrupted: false, doneSent: false,
            label: '<cell-' + (Number.isInteger(count) ? count : 'x' + cellCounter) + '>',
        };
        cur = exec;
        input = new CellInput(exec, hostRevision >= 2 && req.input === true);
        // Before `started`: the host interrupts only after it.
        Atomics.store(shared, GATE, 0);
        const errors = [];
        exec.saved = applyEnv(req.env, errors);
        if (req.cwd && errors.length === 0) {
            try {
                process.chdir(req.cwd);
            } catch (e) {
                errors.push(e);
            }
        }
        emit({ type: 'started', id, execution_count: count }, false);
        exec.t0 = performance.now();
        if (errors.length) {
            // Running in the wrong directory or environment could do harm.
            for (const e of errors) emit(Object.assign(errorEvent(e, null, ''), { id }), true);
            finish(exec, 'error');
            return;
        }
        let source = req.code;
        if (typescript) {
            const js = transpileCell(req.code, exec.label);
            if (js.error) {
                lastError = js.error.value;
                emit({ type: 'error', id, ename: js.error.ename, evalue: js.error.evalue, traceback: js.error.traceback }, true);
                finish(exec, 'error');
                return;
            }
            source = js.code;
            exec.typescriptSource = req.code;
        }
        try {
            source = rewriteModuleSyntax(source);
        } catch (e) {
            log('warning', 'module syntax rewrite failed: ' + describe(e));
        }
        exec.source = source;
        exec.asyncId = asyncHooks.executionAsyncId();
        session.post('Runtime.evaluate', {
            expression: source + '\n//# sourceURL=' + exec.label,
            replMode: true,
            objectGroup: GROUP,
            silent: true,
        }, (e, res) => {
            try {
                evaluated(exec, e, res);
            } catch (e2) {
                log('error', 'driver failure after evaluation: ' + describe(e2));
                if (cur === exec && !exec.finishing) finish(exec, 'error');
            }
        });
    }

    function wasInterrupted(exec, value) {
        return Atomics.load(shared, INTR_SEQ) === exec.seq
            || (value !== null && typeof value === 'object' && value.signal === 'SIGINT');
    }

    function evaluated(exec, e, res) {
        // An interrupted cell whose promise settles later has already ended.
        if (cur !== exec || exec.finishing) return;
        if (!claim(exec)) {
            // Interrupted at the moment it finished: the reader's termination is spent, and the
            // cell counts as interrupted whatever it produced.
            reportInterrupt(exec);
        } else if (e) {
            if (Atomics.load(shared, INTR_SEQ) === exec.seq) {
                reportInterrupt(exec);
            } else {
                emit({ type: 'error', id: exec.id, ename: 'Error', evalue: e.message, traceback: [e.message] }, true);
                exec.status = 'error';
            }
        } else if (res.exceptionDetails) {
            const details = res.exceptionDetails;
            const value = liveValue(details.exception || res.result);
            if (exec.interrupted) {
                // Already reported.
            } else if (wasInterrupted(exec, value)) {
                reportInterrupt(exec);
            } else {
                lastError = value;
                const at = cellPosition(exec, details.lineNumber, details.columnNumber);
                const ev = errorEvent(value, {
                    scriptId: details.scriptId, lineNumber: at.line,
                    columnNumber: at.column, source: at.source, label: exec.label,
                }, '');
                ev.id = exec.id;
                emit(ev, true);
                exec.status = 'error';
            }
        } else {
            const value = liveValue(res.result);
            if (value !== undefined) {
                setLast(value);
                const b = bundle(value);
                emit({ type: 'result', id: exec.id, execution_count: exec.count, data: b.data, metadata: b.metadata }, true);
            }
        }
        releaseObjects();
        // One turn of the event loop first: rejections the cell left unhandled are reported
        // after the microtasks drain, and they belong to this execution.
        setImmediate(() => {
            if (cur === exec && !exec.finishing) finish(exec, exec.status);
        });
    }

    function reportInterrupt(exec) {
        if (exec.interrupted) return;
        exec.interrupted = true;
        exec.status = 'interrupted';
        emit({
            type: 'error', id: exec.id, ename: 'KeyboardInterrupt', evalue: 'Script execution was interrupted',
            traceback: ['KeyboardInterrupt: Script execution was interrupted'],
        }, true);
    }

    // Settles with the reader who ends `exec`. True: this thread does, and no termination will
    // come. False: the reader has terminated the execution's code, and that termination is spent.
    function claim(exec) {
        const seq = exec.seq;
        for (;;) {
            const prev = Atomics.compareExchange(shared, GATE, 0, -seq);
            if (prev !== seq) return true;
            if (Atomics.load(shared, TERM_DONE) === seq) return false;
            // The reader holds the gate: it is about to pause this thread, or terminating.
            // Wait inside an inspector evaluation, where a termination ends that evaluation and
            // nothing else, until the reader gives the gate back or is done.
            session.post('Runtime.evaluate', {
                expression: '(function (s) { while (Atomics.load(s, ' + GATE + ') === ' + seq + ' && Atomics.load(s, '
                    + TERM_DONE + ') !== ' + seq + ') Atomics.wait(s, ' + GATE + ', ' + seq
                    + ', 10); })(globalThis[Symbol.for("replhost.driver")].shared)\n//# sourceURL=' + CLAIM_URL,
                silent: true,
            }, () => {});
        }
    }

    // For the reader, while it has this thread paused: see safePause().
    function asyncState() {
        return [asyncHooks.executionAsyncId(), cur ? cur.asyncId : -1];
    }

    function interruptExecution(seq) {
        const exec = cur;
        if (!exec || exec.seq !== seq || exec.doneSent || exec.finishing) return;
        // Ends the execution whether or not this thread won the gate: when the reader did, its
        // termination has run its course and whatever this thread was doing for the execution
        // is complete or was cut short (possibly after evaluated() reported the interrupt).
        claim(exec);
        reportInterrupt(exec);
        finish(exec, 'interrupted');
    }

    function finish(exec, status) {
        if (cur !== exec || exec.finishing) return;
        claim(exec);
        exec.finishing = true;
        restoreEnv(exec.saved);
        if (input !== null && input.exec === exec) {
            input.end();
            input = null;
        }
        const done = {
            type: 'done', id: exec.id, status, execution_count: exec.count, cwd: currentCwd(),
            duration_ms: Math.round((performance.now() - exec.t0) * 1000) / 1000,
        };
        Atomics.store(shared, DONE_SEQ, exec.seq);
        emit(done, true, () => {
            exec.doneSent = true;
            if (cur === exec) cur = null;
            if (typescript) setImmediate(collectCompilerGarbage);
        });
    }

    // --------------------------------------------------------------------------- input

    // Every cell gets a process.stdin of its own. In a cell whose client can answer (its execute
    // said "input": true), each time something reads it (a readline interface, a 'data'
    // listener) it asks with an input_request and pushes the line of the input_reply; the
    // question's prompt is the one readline's question() was given. In any other cell it ends at
    // once, as the worker's /dev/null does; a stream of its own because Node's process.stdin,
    // once it has ended, never ends again for a reader of a later cell, which would wait forever.
    class CellInput extends require('stream').Readable {
        constructor(exec, asks) {
            super({ encoding: 'utf8' });
            this.exec = exec;
            this.asks = asks;
            this.prompt = '';
            this.asked = false;
            this.scheduled = false;
            this.wanted = false;
            this.fd = 0;
            this.isTTY = false;
            this.on('resume', () => this.ask());
        }

        _read() {
            if (!this.asks) {
                this.push(null);
                return;
            }
            this.wanted = true;
            this.ask();
        }

        // The question goes out once the code that started reading has had its turn (so that a
        // readline question() right after createInterface() names its prompt), and only while
        // something reads: a readline interface closed after its answer pauses the stream, and
        // one that resumes it asks again.
        ask() {
            if (this.asked || this.scheduled || !this.wanted) return;
            if (cur !== this.exec || this.exec.finishing) {
                this.push(null);
                return;
            }
            this.scheduled = true;
            setImmediate(() => {
                this.scheduled = false;
                if (cur !== this.exec || this.exec.finishing || this.readableEnded || this.isPaused()) return;
                this.asked = true;
                this.wanted = false;
                const prompt = this.prompt;
                this.prompt = '';
                emit({ type: 'input_request', id: this.exec.id, prompt, password: false }, true);
            });
        }

        answer(req) {
            this.asked = false;
            if (req.eof === true) this.push(null);
            else this.push((typeof req.value === 'string' ? req.value : '') + '\n');
        }

        end() {
            if (!this.readableEnded) this.push(null);
        }
    }

    function answerInput(req) {
        // An answer that crossed the end of its cell (an interrupt came first) is dropped.
        if (input !== null && input.asked && cur !== null && req.target === cur.id) input.answer(req);
    }

    function installInput() {
        const own = Object.getOwnPropertyDescriptor(process, 'stdin');
        const nodeStdin = own && own.get ? own.get : null;
        if (nodeStdin === null) return;
        Object.defineProperty(process, 'stdin', {
            configurable: true,
            enumerable: own.enumerable,
            get() {
                return input !== null ? input : nodeStdin.call(process);
            },
        });
        const readline = require('readline');
        for (const Interface of [readline.Interface, require('readline/promises').Interface]) {
            const question = Interface && Interface.prototype.question;
            if (typeof question !== 'function') continue;
            Interface.prototype.question = function (query, ...rest) {
                if (input !== null && this.input === input) input.prompt = String(query);
                return question.call(this, query, ...rest);
            };
        }
    }

    // --------------------------------------------------------------------------- typescript

    function loadTypeScript(file) {
        let ts;
        try {
            ts = require(file);
        } catch (e) {
            fatal('cannot load the TypeScript compiler from ' + file + ': ' + describe(e));
        }
        if (!ts || typeof ts.transpileModule !== 'function' || typeof ts.version !== 'string')
            fatal(file + ' is not the TypeScript compiler (it has no transpileModule)');
        const O = ts.ScriptTarget;
        const options = {
            // What this Node runs as it is: no down-levelling, class fields keep their semantics.
            target: O.ES2022 !== undefined ? O.ES2022 : O.ESNext,
            module: ts.ModuleKind.ESNext,
            sourceMap: true,
            newLine: ts.NewLineKind.LineFeed,
            // Without a program the compiler cannot inline a const enum's members: keep the enum.
            preserveConstEnums: true,
        };
        // An import a cell does not use itself is for a later cell: keep every import that is not
        // marked as a type.
        if (Number.parseInt(ts.version, 10) >= 5) options.verbatimModuleSyntax = true;
        else options.preserveValueImports = true;
        // A collector of the whole heap that the user's code does not see as `gc`.
        v8.setFlagsFromString('--expose-gc');
        const collect = vm.runInNewContext('gc');
        v8.setFlagsFromString('--no-expose-gc');
        return { ts, version: ts.version, options, collect, heapAfterCollect: v8.getHeapStatistics().used_heap_size };
    }

    // transpileModule makes a type checker for every cell (about 250 KB, dead at once, in V8's
    // old space), and V8 lets the old space grow with the rate of allocation: over 1,000 cells a
    // worker's RSS climbed from 93 to about 245 MiB. A full collection, between runs, whenever
    // the heap has grown by COLLECT_AFTER since the last one held it at about 170 MiB, for
    // well under a millisecond a cell on average.
    function collectCompilerGarbage() {
        const COLLECT_AFTER = 16 * 1024 * 1024;
        if (cur) return;
        const used = v8.getHeapStatistics().used_heap_size;
        if (used < typescript.heapAfterCollect) typescript.heapAfterCollect = used;
        if (used - typescript.heapAfterCollect < COLLECT_AFTER) return;
        typescript.collect();
        typescript.heapAfterCollect = v8.getHeapStatistics().used_heap_size;
    }

    // The cell as JavaScript ({ code }), or its first syntax error ({ error }). Types are not
    // checked: a cell with type errors runs, as with `ts-node --transpile-only`.
    function transpileCell(code, label) {
        const ts = typescript.ts;
        let out;
        try {
            out = ts.transpileModule(code, {
                compilerOptions: typescript.options, fileName: label + '.ts', reportDiagnostics: true,
            });
        } catch (e) {
            const message = 'the TypeScript compiler failed on this cell: ' + describe(e);
            return { error: { value: e, ename: 'Error', evalue: message, traceback: ['Error: ' + message] } };
        }
        const syntax = (out.diagnostics || []).find((d) => d.file && d.category === ts.DiagnosticCategory.Error);
        if (syntax) {
            const evalue = ts.flattenDiagnosticMessageText(syntax.messageText, '\n');
            const at = syntax.file.getLineAndCharacterOfPosition(syntax.start || 0);
            return {
                error: {
                    value: new SyntaxError(evalue), ename: 'SyntaxError', evalue,
                    traceback: syntaxErrorTraceback(label, code, at.line, at.character, 'SyntaxError: ' + evalue),
                },
            };
        }
        // The compiler ends a module whose imports were all types with `export {};`, which a
        // script cannot contain, and points at a map file that does not exist.
        const js = out.outputText.replace(/(?:^|\n)(?:export \{\};\n)?\/\/# sourceMappingURL=[^\n]*\s*$/, '');
        if (out.sourceMapText) cellMaps.set(label, out.sourceMapText);
        return { code: js };
    }

    // The TypeScript position of a zero-based line and column of a cell's JavaScript, or null.
    function originalPosition(label, line, column) {
        const map = cellMaps.get(label);
        if (map === undefined) return null;
        let entry;
        try {
            entry = new Module.SourceMap(JSON.parse(map)).findEntry(line, column);
        } catch (e) {
            return null;
        }
        if (!entry || !Number.isInteger(entry.originalLine)) return null;
        return { line: entry.originalLine, column: entry.originalColumn };
    }

    // Where a syntax error of the evaluated cell lies, in the code the user wrote.
    function cellPosition(exec, line, column) {
        const at = exec.typescriptSource === undefined ? null : originalPosition(exec.label, line || 0, column || 0);
        return at ? { line: at.line, column: at.column, source: exec.typescriptSource }
            : { line, column, source: exec.source };
    }

    // Stack frames of TypeScript cells (`<cell-3>:7:5`) at the positions of the TypeScript.
    function mapCellPositions(text) {
        if (cellMaps.size === 0) return text;
        return text.replace(/(<cell-[^>\s]*>):(\d+):(\d+)/g, (whole, label, line, column) => {
            const at = originalPosition(label, Number(line) - 1, Number(column) - 1);
            return at ? label + ':' + (at.line + 1) + ':' + (at.column + 1) : whole;
        });
    }

    // ------------------------------------------------------------------ module syntax

    // Rewrites what a script cannot contain but a cell may: dynamic import() (which has no
    // loader in inspector-evaluated code) becomes a call of a helper that imports relative to
    // the cwd, and top-level static import declarations become awaited helper calls.
    // A small scanner skips strings, templates, comments and regular expressions; it is not a
    // parser, and code it does not understand is left as it is.
    function rewriteModuleSyntax(code) {
        if (!code.includes('import')) return code;
        const edits = [];
        const n = code.length;
        const stack = [];
        let i = 0;
        let prev = '';        // last significant token: '' at the start, else its kind or text
        let prevEnd = 0;
        const exprKeywords = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete',
            'void', 'throw', 'case', 'do', 'else', 'yield', 'await', 'extends']);
        const idStart = /[$_\p{ID_Start}\\]/u;
        const idPart = /[$\u200c\u200d\p{ID_Continue}\\]/u;

        const skipSpace = (j) => {
            for (;;) {
                while (j < n && /\s/.test(code[j])) j++;
                if (code.startsWith('//', j)) {
                    while (j < n && code[j] !== '\n') j++;
                } else if (code.startsWith('/*', j)) {
                    const e = code.indexOf('*/', j + 2);
                    j = e < 0 ? n : e + 2;
                } else {
                    return j;
                }
            }
        };
        const readString = (j) => {
            const q = code[j];
            j++;
            while (j < n && code[j] !== q && code[j] !== '\n') j += code[j] === '\\' ? 2 : 1;
            return j + 1;
        };
        const readIdent = (j) => {
            if (j >= n || !idStart.test(code[j])) return j;
            j++;
            while (j < n && idPart.test(code[j])) j++;
            return j;
        };
        // Returns the index after the template part, and whether it stopped at `${`.
        const readTemplate = (j) => {
            while (j < n) {
                if (code[j] === '\\') {
                    j += 2;
                } else if (code[j] === '`') {
                    return [j + 1, false];
                } else if (code[j] === '$' && code[j + 1] === '{') {
                    return [j + 2, true];
                } else {
                    j++;
                }
            }
            return [n, false];
        };
        const readRegex = (j) => {
            j++;
            let inClass = false;
            while (j < n && code[j] !== '\n') {
                const c = code[j];
                if (c === '\\') {
                    j += 2;
                    continue;
                }
                if (c === '[') inClass = true;
                else if (c === ']') inClass = false;
                else if (c === '/' && !inClass) break;
                j++;
            }
            j++;
            while (j < n && /[a-z]/i.test(code[j])) j++;
            return j;
        };
        // `import(...) {`: a method named import, not a dynamic import. Parentheses are
        // counted without regard to strings; parameter lists rarely hold any.
        const isMethodDefinition = (open) => {
            let depth = 0;
            let j = open;
            for (; j < n; j++) {
                if (code[j] === '(') depth++;
                else if (code[j] === ')' && --depth === 0) break;
            }
            return code[skipSpace(j + 1)] === '{';
        };
        const regexAllowed = () => prev === '' || prev === 'kw'
            || !(prev === 'id' || prev === 'num' || prev === 'str' || prev === 'regex' || prev === ')' || prev === ']');

        // `import ...` at i (a statement of the top level): the replacement, or null.
        const staticImport = (start) => {
            let j = skipSpace(start + 6);
            let defaultName = null;
            let namespace = null;
            let named = null;
            const expectWord = (word) => {
                const k = skipSpace(j);
                if (readIdent(k) === k + word.length && code.startsWith(word, k)) {
                    j = k + word.length;
                    return true;
                }
                return false;
            };
            const ident = () => {
                const k = skipSpace(j);
                const e = readIdent(k);
                if (e === k) return null;
                j = e;
                return code.slice(k, e);
            };
            const stringAt = () => {
                const k = skipSpace(j);
                if (code[k] !== '"' && code[k] !== "'") return null;
                j = readString(k);
                return code.slice(k, j);
            };
            let spec = stringAt();
            if (spec === null) {
                const k = skipSpace(j);
                if (code[k] !== '*' && code[k] !== '{') {
                    defaultName = ident();
                    if (defaultName === null || defaultName === 'from') return null;
                    const c = skipSpace(j);
                    if (code[c] === ',') j = c + 1;
                }
                const k2 = skipSpace(j);
                if (code[k2] === '*') {
                    j = k2 + 1;
                    if (!expectWord('as')) return null;
                    namespace = ident();
                    if (namespace === null) return null;
                } else if (code[k2] === '{') {
                    j = k2 + 1;
                    named = [];
                    for (;;) {
                        const c = skipSpace(j);
                        if (code[c] === '}') {
                            j = c + 1;
                            break;
                        }
                        let imported = stringAt();
                        if (imported === null) imported = ident();
                        if (imported === null) return null;
                        let local = imported;
                        if (expectWord('as')) {
                            local = ident();
                            if (local === null) return null;
                        } else if (/^["']/.test(imported)) {
                            return null;
                        }
                        named.push(imported === local ? local : imported + ': ' + local);
                        const d = skipSpace(j);
                        if (code[d] === ',') j = d + 1;
                        else if (code[d] !== '}') return null;
                    }
                } else if (defaultName === null) {
                    return null;
                }
                if (!expectWord('from')) return null;
                spec = stringAt();
                if (spec === null) return null;
            }
            // Import attributes, passed on as the options of import().
            let options = '';
            const save = j;
            if (expectWord('with') || expectWord('assert')) {
                const k = skipSpace(j);
                const e = code.indexOf('}', k);
                if (code[k] !== '{' || e < 0) return null;
                options = ', { with: ' + code.slice(k, e + 1) + ' }';
                j = e + 1;
            } else {
                j = save;
            }
            const call = 'await ' + IMPORT_HELPER + '(' + spec + options + ')';
            let text;
            if (namespace !== null) {
                text = 'const ' + namespace + ' = ' + call + (defaultName !== null ? ', ' + defaultName + ' = ' + namespace + '.default' : '');
            } else if (named !== null || defaultName !== null) {
                const parts = (defaultName !== null ? ['default: ' + defaultName] : []).concat(named || []);
                text = parts.length ? 'const { ' + parts.join(', ') + ' } = ' + call : call;
            } else {
                text = call;
            }
            // Keep the line count, so line numbers in errors stay right.
            const lines = code.slice(start, j).split('\n').length - 1;
            return { end: j, text: text + ';' + '\n'.repeat(lines) };
        };

        while (i < n) {
            const c = code[i];
            if (/\s/.test(c)) {
                i++;
                continue;
            }
            if (c === '/' && code[i + 1] === '/') {
                while (i < n && code[i] !== '\n') i++;
                continue;
            }
            if (c === '/' && code[i + 1] === '*') {
                const e = code.indexOf('*/', i + 2);
                i = e < 0 ? n : e + 2;
                continue;
            }
            if (c === '"' || c === "'") {
                i = readString(i);
                prev = 'str';
            } else if (c === '`' || (c === '}' && stack[stack.length - 1] === '`')) {
                if (c === '}') stack.pop();
                const [e, open] = readTemplate(i + 1);
                i = e;
                if (open) {
                    stack.push('`');
                    prev = '(';
                } else {
                    prev = 'str';
                }
            } else if (c === '{' || c === '(' || c === '[') {
                stack.push(c);
                i++;
                prev = c;
            } else if (c === '}' || c === ')' || c === ']') {
                stack.pop();
                i++;
                prev = c;
            } else if (c === '/' && regexAllowed()) {
                i = readRegex(i);
                prev = 'regex';
            } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(code[i + 1] || ''))) {
                i++;
                while (i < n && /[0-9a-zA-Z_.]/.test(code[i])) i++;
                prev = 'num';
            } else if (idStart.test(c)) {
                const e = readIdent(i);
                const word = code.slice(i, e);
                if (word === 'import' && prev !== '.' && prev !== '?.') {
                    const k = skipSpace(e);
                    if (code[k] === '(') {
                        if (!isMethodDefinition(k)) edits.push({ start: i, end: e, text: IMPORT_HELPER });
                    } else if (code[k] !== '.' && stack.length === 0
                        && (prev === '' || prev === ';' || prev === '}' || code.slice(prevEnd, i).includes('\n'))) {
                        const r = staticImport(i);
                        if (r) {
                            edits.push({ start: i, end: r.end, text: r.text });
                            i = r.end;
                            prev = ';';
                            prevEnd = i;
                            continue;
                        }
                    }
                }
                i = e;
                prev = exprKeywords.has(word) ? 'kw' : 'id';
            } else if (c === '?' && code[i + 1] === '.' && !/[0-9]/.test(code[i + 2] || '')) {
                i += 2;
                prev = '?.';
            } else if (c === '.' && code.startsWith('...', i)) {
                i += 3;
                prev = '...';
            } else {
                i++;
                prev = c;
            }
            prevEnd = i;
        }
        if (edits.length === 0) return code;
        let result = '';
        let pos = 0;
        for (const e of edits) {
            result += code.slice(pos, e.start) + e.text;
            pos = e.end;
        }
        return result + code.slice(pos);
    }

    // ------------------------------------------------------------ completion, variables

    function globalNames() {
        const names = new Set();
        try {
            for (const name of postSync('Runtime.globalLexicalScopeNames', {}).names) names.add(name);
        } catch (e) {
            // Older runtimes: globals only.
        }
        for (let o = globalThis; o; o = Object.getPrototypeOf(o)) {
            for (const name of Object.getOwnPropertyNames(o)) names.add(name);
        }
        names.delete(IMPORT_HELPER);
        return names;
    }

    function propertyNames(value) {
        const names = new Set();
        let o = value;
        if (o === null || o === undefined) return names;
        if (typeof o !== 'object' && typeof o !== 'function') o = Object(o);
        for (let depth = 0; o && depth < 64 && names.size < 5000; depth++) {
            for (const name of Object.getOwnPropertyNames(o)) names.add(name);
            o = Object.getPrototypeOf(o);
        }
        return names;
    }

    function complete(req) {
        const code = typeof req.code === 'string' ? req.code : '';
        const points = Array.from(code);
        let cursor = req.cursor;
        if (!Number.isInteger(cursor) || cursor < 0 || cursor > points.length) cursor = points.length;
        const before = points.slice(0, cursor).join('');
        const token = /(?:[$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*|\.)*$/u.exec(before)[0];
        let matches = [];
        let prefix = token;
        const dot = token.lastIndexOf('.');
        if (dot >= 0) {
            const expr = token.slice(0, dot);
            prefix = token.slice(dot + 1);
            if (expr && !expr.startsWith('.') && !expr.includes('..')) {
                // A built-in module global not used yet: loading it is harmless, and its getter
                // then reads without side effects.
                const head = expr.split('.')[0];
                const d = lazyBuiltins.has(head) ? Object.getOwnPropertyDescriptor(globalThis, head) : undefined;
                if (d && d.get) {
                    try {
                        d.get.call(globalThis);
                    } catch (e) {
                        // Completion then finds nothing there.
                    }
                }
                // Side-effect free evaluation only: completion must not run the user's code.
                let res;
                try {
                    res = postSync('Runtime.evaluate', {
                        expression: expr, throwOnSideEffect: true, timeout: 500, silent: true, objectGroup: GROUP,
                    });
                } catch (e) {
                    res = null;
                }
                if (res && !res.exceptionDetails) matches = Array.from(propertyNames(liveValue(res.result)));
            }
        } else {
            matches = Array.from(globalNames()).concat(KEYWORDS);
        }
        const valid = /^[$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*$/u;
        matches = Array.from(new Set(matches.filter((m) => m.startsWith(prefix) && valid.test(m)))).sort();
        return {
            type: 'complete_reply', matches,
            cursor_start: cursor - Array.from(prefix).length, cursor_end: cursor,
        };
    }

    // A short size for the variables view: a length, or a Map's or Set's size.
    function varSize(v) {
        try {
            if (typeof v === 'string' || Array.isArray(v)) return String(v.length);
            if (ArrayBuffer.isView(v) && typeof v.length === 'number') return String(v.length);
            if (v instanceof Map || v instanceof Set) return String(v.size);
        } catch (e) {
            // A revoked proxy, say: no size.
        }
        return undefined;
    }

    function variableEntry(name, v, limit) {
        const entry = { name, type: typeName(v), repr: shortRepr(v, limit) };
        const size = varSize(v);
        if (size !== undefined) entry.size = size;
        return entry;
    }

    function variables(req) {
        let limit = req.max_repr;
        if (!Number.isInteger(limit) || limit <= 0) limit = 200;
        const result = [];
        let lexical = [];
        try {
            // A name declared again in a later cell is listed once per declaration.
            lexical = Array.from(new Set(postSync('Runtime.globalLexicalScopeNames', {}).names));
        } catch (e) {
            lexical = [];
        }
        if (lexical.length) {
            // Names come from V8 and are identifiers. A binding whose initializer threw stays
            // uninitialized (reading it throws), so each is read on its own. The reader's own
            // names must not hide the user's.
            const body = lexical.map((name) => 'try { $rh$values.push(' + name + '); } catch { $rh$values.push($rh$none); }').join('\n');
            const res = postSync('Runtime.evaluate', {
                expression: '(function ($rh$none) { const $rh$values = []; ' + body + ' return $rh$values; })'
                    + '(globalThis[Symbol.for("replhost.driver")].uninitialized)',
                silent: true, objectGroup: GROUP,
            });
            const values = res.exceptionDetails ? [] : liveValue(res.result) || [];
            lexical.forEach((name, k) => {
                const v = values[k];
                if (v === UNINITIALIZED || k >= values.length) {
                    result.push({ name, type: 'uninitialized', repr: '<uninitialized>' });
                } else {
                    result.push(variableEntry(name, v, limit));
                }
            });
        }
        const seen = new Set(lexical);
        for (const name of Object.keys(globalThis)) {
            if (seen.has(name) || baseline.get(name) === true) continue;
            let v;
            try {
                v = globalThis[name];
            } catch (e) {
                v = e;
            }
            result.push(variableEntry(name, v, limit));
        }
        return { type: 'variables_reply', variables: result };
    }
}
