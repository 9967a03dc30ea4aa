// SPDX-License-Identifier: Apache-2.0

// replhost-go-worker is the worker of replhost's Go contexts: one process per context, running
// Go code in the yaegi interpreter and speaking worker protocol version 1
// (docs/worker-protocol.md) on fds 3 and 4. See plugins/go/README.md.
//
// Why it looks like this:
//
//   - Output is not captured: the interpreter's fmt.Print* and os.Stdout write to fd 1, and
//     child processes inherit fds 1 and 2, which are the host's pipes. Go writes them
//     unbuffered, so nothing needs flushing before a sync mark.
//   - One goroutine reads requests and handles interrupt and shutdown at once, even while a
//     cell runs; the main goroutine runs cells and answers everything else in order.
//   - SIGINT is caught (Go would otherwise exit) and, like the interrupt request, cancels the
//     running cell; while idle it is ignored, and so is a SIGINT that trails an in-band
//     interrupt of a cell that has already ended (it would otherwise cancel the next cell).
package main

import (
	"context"
	"fmt"
	"go/build"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

const protocolVersion = 1

// yaegiVersion is set at build time (-ldflags -X main.yaegiVersion=...).
var yaegiVersion = "unknown"

// debianGoPath holds Debian's shared Go sources (the golang-*-dev packages).
const debianGoPath = "/usr/share/gocode"

// goPath is the one directory (yaegi 0.14 takes no list) whose src/ source packages are
// imported from: init's "gopath" option, else $GOPATH, else Debian's shared sources when they
// are there, else Go's default (~/go).
func goPath(options map[string]interface{}) string {
	if value, ok := options["gopath"].(string); ok && value != "" {
		return value
	}
	if value := os.Getenv("GOPATH"); value != "" {
		return filepath.SplitList(value)[0]
	}
	if info, err := os.Stat(debianGoPath); err == nil && info.IsDir() {
		return debianGoPath
	}
	return build.Default.GOPATH
}

type driver struct {
	t *transport
	r *runner

	mu          sync.Mutex
	runningID   string // the execute request running now, or ""
	cancel      context.CancelFunc
	interrupted bool
	// The last in-band interrupt: its target and when it came. The host sends SIGINT right after
	// each in-band interrupt, but the goroutine that receives signals may only run once that
	// cell has ended and the next one has started: such a signal belongs to the in-band one.
	inbandTarget string
	inbandAt     time.Time
}

// signalGrace is how long after an in-band interrupt a SIGINT is taken as its companion.
const signalGrace = 500 * time.Millisecond

// settleGrace bounds how long a cell's end waits for requests already written to be handled.
const settleGrace = 250 * time.Millisecond

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Printf("replhost-go-worker %s yaegi %s\n", runtime.Version(), yaegiVersion)
		return
	}
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: replhost-go-worker [--version]\n"+
			"A replhost worker: it speaks the worker protocol on fds 3 and 4 and is started by replhost.")
		os.Exit(2)
	}
	t, err := openTransport()
	if err != nil {
		fmt.Fprintln(os.Stderr, "replhost-go-worker:", err)
		os.Exit(2)
	}
	// Caught from the first instruction on, so that an early SIGINT cannot end the worker.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt)

	first, err := t.readRequest()
	if err == errEndOfRequests {
		os.Exit(0)
	}
	if err != nil {
		fatal(t, err.Error())
	}
	if first.Type != "init" {
		fatal(t, fmt.Sprintf("first request must be init, got %q", truncate(first.Type, 40)))
	}
	if !validNonce(first.MarkNonce) {
		fatal(t, "init carries no valid mark_nonce")
	}
	t.setNonce(first.MarkNonce)

	r, err := newRunner(goPath(first.Options))
	if err != nil {
		fatal(t, "cannot start the Go interpreter: "+err.Error())
	}
	d := &driver{t: t, r: r}
	displaySink.Lock()
	displaySink.send = d.sendDisplay
	displaySink.Unlock()
	t.send(event{
		"type": "hello", "id": first.ID, "protocol": protocolVersion, "language": "go",
		"language_version": strings.TrimPrefix(runtime.Version(), "go"),
		"implementation":   "yaegi " + yaegiVersion, "pid": os.Getpid(),
		"capabilities": map[string]interface{}{
			"interrupt": []string{"signal", "inband"}, "complete": true, "variables": true,
			"display": displayMimes,
		},
	})

	go func() {
		for range signals {
			d.interruptBySignal()
		}
	}()
	requests := make(chan *request, 16)
	go d.readRequests(requests)
	for req := range requests {
		d.dispatch(req)
	}
	os.Exit(0)
}

var noncePattern = regexp.MustCompile(`^[0-9A-Fa-f]{1,64}$`)

func validNonce(nonce string) bool { return noncePattern.MatchString(nonce) }

func fatal(t *transport, message string) {
	t.send(event{"type": "log", "level": "error", "message": message})
	os.Exit(2)
}

// readRequests runs on its own goroutine: interrupt and shutdown are handled here at once, the
// rest is passed to the main goroutine in order.
func (d *driver) readRequests(requests chan<- *request) {
	for {
		req, err := d.t.readRequest()
		if err == errEndOfRequests {
			// The host is gone: nobody will ask for anything again.
			close(requests)
			return
		}
		if bad, ok := err.(*badRequest); ok {
			d.t.send(event{"type": "error_reply", "id": req.ID, "reason": bad.Error()})
			d.t.requestHandled()
			continue
		}
		if err != nil {
			fatal(d.t, "cannot read requests: "+err.Error())
		}
		switch req.Type {
		case "interrupt":
			d.mu.Lock()
			d.inbandTarget, d.inbandAt = req.Target, time.Now()
			d.mu.Unlock()
			d.interruptRunning(req.Target)
		case "shutdown":
			d.t.send(event{"type": "shutdown_reply", "id": req.ID})
			os.Exit(0)
		default:
			requests <- req
		}
		d.t.requestHandled()
	}
}

func (d *driver) dispatch(req *request) {
	switch req.Type {
	case "execute":
		d.execute(req)
	case "complete":
		code := ""
		if req.Code != nil {
			code = *req.Code
		}
		cursor := len([]rune(code))
		if req.Cursor != nil && *req.Cursor >= 0 && *req.Cursor < cursor {
			cursor = *req.Cursor
		}
		matches, start, end := d.r.complete(code, cursor)
		d.t.send(event{"type": "complete_reply", "id": req.ID, "matches": matches,
			"cursor_start": start, "cursor_end": end})
	case "variables":
		d.t.send(event{"type": "variables_reply", "id": req.ID,
			"variables": d.r.variables(req.MaxRepr)})
	case "init":
		d.t.send(event{"type": "error_reply", "id": req.ID, "reason": "already initialized"})
	default:
		d.t.send(event{"type": "error_reply", "id": req.ID, "reason": "unknown request type"})
	}
}

// interruptBySignal is SIGINT: it cancels the running cell, unless it is the late companion of an
// in-band interrupt of a cell that has already ended (see driver.inbandTarget).
func (d *driver) interruptBySignal() {
	d.mu.Lock()
	late := d.inbandTarget != "" && d.inbandTarget != d.runningID &&
		time.Since(d.inbandAt) < signalGrace
	d.mu.Unlock()
	if !late {
		d.interruptRunning("")
	}
}

// interruptRunning cancels the running cell when target is its id, or for any cell when target
// is "" (SIGINT). Stale interrupts, for a cell that has ended, do nothing.
func (d *driver) interruptRunning(target string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.runningID == "" || (target != "" && target != d.runningID) {
		return
	}
	d.interrupted = true
	d.cancel()
}

// settleRequests returns once every request the host wrote before now has been handled, or after
// settleGrace. The host writes an in-band interrupt before it sends SIGINT to the process group,
// so a child process that SIGINT ended can let its cell finish before readRequests has seen the
// interrupt: without this wait such a cell would be reported ok instead of interrupted.
func (d *driver) settleRequests() {
	deadline := time.Now().Add(settleGrace)
	for !d.t.requestsSettled() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

func (d *driver) sendDisplay(data, metadata map[string]interface{}) {
	d.mu.Lock()
	id := d.runningID
	d.mu.Unlock()
	// Output of a goroutine that outlived its cell belongs to no run; the host drops it.
	if id == "" {
		return
	}
	d.t.sendMarked(event{"type": "display", "id": id, "data": data, "metadata": metadata})
}

func (d *driver) execute(req *request) {
	if req.Code == nil {
		d.t.send(event{"type": "error_reply", "id": req.ID, "reason": "execute needs a string code"})
		return
	}
	begin := time.Now()
	saved, errs := applyEnv(req.Env)
	if req.Cwd != nil && *req.Cwd != "" && len(errs) == 0 {
		if err := os.Chdir(*req.Cwd); err != nil {
			errs = append(errs, fmt.Sprintf("cannot change directory to %s: %v", *req.Cwd, err))
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	d.mu.Lock()
	d.runningID, d.cancel, d.interrupted = req.ID, cancel, false
	d.mu.Unlock()
	setSleepContext(ctx)

	d.t.send(event{"type": "started", "id": req.ID, "execution_count": req.ExecutionCount})
	var outcome cellOutcome
	if len(errs) > 0 {
		// Running in the wrong directory or environment could do harm.
		outcome = cellOutcome{status: "error", event: event{"type": "error",
			"ename": "EnvironmentError", "evalue": errs[0], "traceback": errs}}
	} else {
		outcome = d.r.runCell(ctx, *req.Code, req.ExecutionCount)
	}

	if outcome.status == "ok" {
		d.settleRequests()
	}
	d.mu.Lock()
	if d.interrupted && outcome.status != "interrupted" && outcome.status != "error" {
		// The interrupt came as the last piece ended (or ended a child process the cell then
		// ignored): the cell did not run to its end as written.
		outcome = interruptedOutcome()
	}
	d.runningID, d.cancel = "", nil
	d.mu.Unlock()
	setSleepContext(nil)
	cancel()

	if outcome.event != nil {
		outcome.event["id"] = req.ID
		d.t.sendMarked(outcome.event)
	}
	restoreEnv(saved)
	d.t.sendDone(event{"type": "done", "id": req.ID, "status": outcome.status,
		"execution_count": req.ExecutionCount, "cwd": currentDir(),
		"duration_ms": float64(time.Since(begin).Microseconds()) / 1000})
}
