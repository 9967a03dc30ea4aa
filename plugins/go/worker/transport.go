// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"unicode/utf8"
	"unsafe"
)

const (
	requestFd = 3
	eventFd   = 4
	// Protocol limit for one frame.
	maxFrame = 64 << 20
	// Events above this are shrunk rather than sent, leaving headroom under the host's limit.
	shrinkAt = maxFrame - (1 << 16)
	// ioctl request that counts the unread bytes of a pipe (Linux FIONREAD).
	ioctlFionread = 0x541B
	// poll(2)'s POLLIN.
	pollIn = 0x1
)

// envLayer is one layer of an env delta: values to set (null unsets) and keys to unset.
type envLayer struct {
	Set   map[string]*string `json:"set"`
	Unset []string           `json:"unset"`
}

type envDelta struct {
	Context *envLayer `json:"context"`
	Exec    *envLayer `json:"exec"`
}

// request is any request of the worker protocol; each type uses its own fields.
type request struct {
	Type           string                 `json:"type"`
	ID             string                 `json:"id"`
	Protocol       int                    `json:"protocol"`
	MarkNonce      string                 `json:"mark_nonce"`
	Options        map[string]interface{} `json:"options"`
	Code           *string                `json:"code"`
	ExecutionCount int                    `json:"execution_count"`
	Env            *envDelta              `json:"env"`
	Cwd            *string                `json:"cwd"`
	Target         string                 `json:"target"`
	Cursor         *int                   `json:"cursor"`
	MaxRepr        int                    `json:"max_repr"`
}

// event is one message to the host.
type event map[string]interface{}

// transport is the worker's side of the protocol: requests from fd 3, events to fd 4, and the
// sync marks written to saved duplicates of fd 1 and fd 2.
//
// readRequest is called from one goroutine only; the send methods from any goroutine (a cell's
// display() runs on the interpreter's goroutine), serialised so that a mark and the event that
// carries it are never separated by another event.
type transport struct {
	in      *bufio.Reader
	out     *os.File
	markOut int
	markErr int

	// requests is the reader under in; it says whether bytes it took from fd 3 are still being
	// handled (see requestsSettled).
	requests *requestReader

	mu         sync.Mutex
	markPrefix string
	seq        uint64
}

func openTransport() (*transport, error) {
	for _, fd := range []int{requestFd, eventFd} {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return nil, fmt.Errorf("fd %d is not open (%v): fd 3 and fd 4 must carry the worker protocol", fd, err)
		}
		// Children of user code must not inherit the protocol.
		syscall.CloseOnExec(fd)
	}
	markOut, err := dupCloseOnExec(1)
	if err != nil {
		return nil, fmt.Errorf("cannot duplicate stdout: %v", err)
	}
	markErr, err := dupCloseOnExec(2)
	if err != nil {
		return nil, fmt.Errorf("cannot duplicate stderr: %v", err)
	}
	requests := &requestReader{fd: requestFd}
	return &transport{
		in:       bufio.NewReaderSize(requests, 1<<16),
		out:      os.NewFile(eventFd, "events"),
		markOut:  markOut,
		markErr:  markErr,
		requests: requests,
	}, nil
}

// requestReader reads fd 3 and marks itself busy from the moment it takes bytes out of the pipe
// until the reading goroutine has handled every request in them: bytes are never both out of
// the kernel and unaccounted for, which is what requestsSettled relies on.
type requestReader struct {
	fd   int
	mu   sync.Mutex
	busy bool
}

func (r *requestReader) Read(p []byte) (int, error) {
	for {
		// Wait for bytes without taking them, so that busy is set before they leave the pipe.
		pfd := struct {
			fd      int32
			events  int16
			revents int16
		}{fd: int32(r.fd), events: pollIn}
		_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1,
			0, 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		r.mu.Lock()
		r.busy = true
		r.mu.Unlock()
		n, err := syscall.Read(r.fd, p)
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// requestHandled is called by the reading goroutine after it handled a request: when nothing
// read is left in the buffer, the reader is no longer busy.
func (t *transport) requestHandled() {
	if t.in.Buffered() > 0 {
		return
	}
	t.requests.mu.Lock()
	t.requests.busy = false
	t.requests.mu.Unlock()
}

// requestsSettled says whether every request written to fd 3 before the call has been read and
// handled; true as well when the kernel cannot tell.
func (t *transport) requestsSettled() bool {
	t.requests.mu.Lock()
	defer t.requests.mu.Unlock()
	unread, known := unreadBytes(requestFd)
	return !known || (!t.requests.busy && unread == 0)
}

func dupCloseOnExec(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 5)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// setNonce fixes the mark bytes; called once, for init, before any mark is written.
func (t *transport) setNonce(nonce string) {
	t.mu.Lock()
	t.markPrefix = "\x1b]5253;rh;" + nonce + ";"
	t.mu.Unlock()
}

// errEndOfRequests means the host closed fd 3 between two frames.
var errEndOfRequests = errors.New("end of requests")

// readRequest returns the next request. A malformed frame is an error the worker cannot
// recover from (protocol violation); a body whose fields have unexpected types still yields the
// type and id so the caller can answer with error_reply.
func (t *transport) readRequest() (*request, error) {
	header, err := t.in.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(header) == 0 {
			return nil, errEndOfRequests
		}
		return nil, fmt.Errorf("malformed frame header: %v", err)
	}
	digits := header[:len(header)-1]
	if len(digits) < 1 || len(digits) > 10 {
		return nil, fmt.Errorf("malformed frame header %q", truncate(string(digits), 32))
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, fmt.Errorf("malformed frame header %q", truncate(string(digits), 32))
		}
	}
	length, _ := strconv.ParseInt(string(digits), 10, 64)
	if length > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes exceeds the limit", length)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(t.in, body); err != nil {
		return nil, fmt.Errorf("end of input inside a frame: %v", err)
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		var head struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if json.Unmarshal(body, &head) != nil || head.Type == "" {
			return nil, fmt.Errorf("frame is not a request object: %v", err)
		}
		return &request{Type: head.Type, ID: head.ID}, &badRequest{reason: err.Error()}
	}
	if req.Type == "" {
		return nil, errors.New("frame is not a request object: no type")
	}
	return &req, nil
}

// badRequest is a well-framed request whose fields do not have the types the protocol says.
type badRequest struct{ reason string }

func (e *badRequest) Error() string { return "malformed request: " + e.reason }

// send writes an event without a mark.
func (t *transport) send(ev event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.write(ev)
}

// sendMarked writes a sync mark to fd 1 and fd 2, then the event carrying it, so the host
// places the event after everything the run printed before it.
func (t *transport) sendMarked(ev event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ev["mark"] = t.writeMark()
	t.write(ev)
}

// sendDone writes the done event, with a mark unless both output pipes are empty (protocol §5:
// everything written before is then already in the host's hands).
func (t *transport) sendDone(ev event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !pipeIsEmpty(t.markOut) || !pipeIsEmpty(t.markErr) {
		ev["mark"] = t.writeMark()
	}
	t.write(ev)
}

// writeMark writes the next mark with one write() per stream (atomic on a pipe).
func (t *transport) writeMark() uint64 {
	// Numbered before writing: if one stream got it and the other did not, the next mark still
	// supersedes it on both.
	t.seq++
	mark := []byte(t.markPrefix + strconv.FormatUint(t.seq, 10) + "\a")
	writeFd(t.markOut, mark)
	writeFd(t.markErr, mark)
	return t.seq
}

func writeFd(fd int, data []byte) {
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return
		}
		data = data[n:]
	}
}

// pipeIsEmpty says whether fd is a pipe with no unread bytes; false when it cannot tell.
func pipeIsEmpty(fd int) bool {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return false
	}
	unread, known := unreadBytes(fd)
	return known && unread == 0
}

// unreadBytes is how many bytes wait to be read from the pipe or socket fd; known is false when
// the kernel cannot tell.
func unreadBytes(fd int) (unread int, known bool) {
	var n int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), ioctlFionread,
		uintptr(unsafe.Pointer(&n)))
	return int(n), errno == 0
}

func (t *transport) write(ev event) {
	payload, err := json.Marshal(ev)
	if err != nil {
		payload, _ = json.Marshal(event{"type": "log", "level": "error",
			"message": "cannot encode a " + fmt.Sprint(ev["type"]) + " event: " + err.Error()})
	}
	if len(payload) > shrinkAt {
		size := len(payload)
		payload, _ = json.Marshal(shrinkEvent(ev))
		note, _ := json.Marshal(event{"type": "log", "level": "warning", "message": fmt.Sprintf(
			"%v event of %d bytes exceeds the frame limit; sent without its rich data", ev["type"], size)})
		t.writeFrame(note)
	}
	t.writeFrame(payload)
}

func (t *transport) writeFrame(payload []byte) {
	frame := make([]byte, 0, len(payload)+12)
	frame = strconv.AppendInt(frame, int64(len(payload)), 10)
	frame = append(frame, '\n')
	frame = append(frame, payload...)
	if _, err := t.out.Write(frame); err != nil {
		// Nobody reads our events any more: the host is gone.
		os.Exit(1)
	}
}

// shrinkEvent keeps only a short text/plain of an event's MIME bundle.
func shrinkEvent(ev event) event {
	small := event{}
	for k, v := range ev {
		small[k] = v
	}
	text := "[output too large to send]"
	if data, ok := ev["data"].(map[string]interface{}); ok {
		if plain, ok := data["text/plain"].(string); ok {
			text = truncate(plain, 1<<16)
		}
	}
	if _, ok := ev["data"]; ok {
		small["data"] = map[string]interface{}{"text/plain": text}
		small["metadata"] = map[string]interface{}{}
	}
	if tb, ok := ev["traceback"].([]string); ok && len(tb) > 100 {
		small["traceback"] = tb[:100]
	}
	if v, ok := ev["evalue"].(string); ok {
		small["evalue"] = truncate(v, 1<<16)
	}
	return small
}

// truncate cuts s to at most n bytes, at a character boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
