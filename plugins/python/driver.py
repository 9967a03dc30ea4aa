# SPDX-License-Identifier: Apache-2.0
"""replhost worker driver for CPython >= 3.8 (standard library only).

Speaks worker protocol version 1: requests arrive as frames on fd 3, events
leave as frames on fd 4, and user output goes untouched to fd 1/2. Runs as a
script or through -c, so it must not depend on __file__.
"""

import __future__
import _signal as _csignal
import _thread
import ast
import binascii
import builtins
import codecs
import fcntl
import io
import json
import keyword
import linecache
import os
import platform
import re
import reprlib
import signal
import stat
import sys
import termios
import time
import traceback
import types

_REQ_FD = 3
_EVT_FD = 4
_PROTOCOL = 1
# The newest addition to protocol 1 this driver uses: input requests (2), display ids, updates
# and clear_output (1).
_REVISION = 2
_MAX_FRAME = 64 << 20
# Events above this are shrunk rather than sent, leaving headroom under the
# host's hard limit.
_SHRINK_AT = _MAX_FRAME - (1 << 16)
_CO_COROUTINE = 0x0080
_TOP_LEVEL_AWAIT = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
_FUTURE_MASK = 0
for _name in __future__.all_feature_names:
    _FUTURE_MASK |= getattr(__future__, _name).compiler_flag
del _name

_CHART_MIME = "application/vnd.replhost.chart+json"
_DATA_MIME = "application/vnd.replhost.data+json"
# Rows of a DataFrame carried in its data; the rest is left out and `truncated` says so.
_DATA_MAX_ROWS = 1000
_DISPLAY_MIMES = [
    "text/plain", "text/html", "text/markdown", "text/latex",
    "image/svg+xml", "image/png", "image/jpeg", "application/json",
    "application/javascript", "application/pdf",
    # Passed through from the libraries that make them (their _repr_mimebundle_).
    "application/vnd.plotly.v1+json", "application/vnd.vegalite.v5+json",
    "application/vnd.vega.v5+json", "application/vnd.bokehjs_load.v0+json",
    "application/vnd.bokehjs_exec.v0+json",
    # The data beside a matplotlib figure's PNG and a pandas table's HTML.
    _CHART_MIME, _DATA_MIME,
]
_REPR_METHODS = (
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_latex_", "text/latex"),
    ("_repr_json_", "application/json"),
    ("_repr_javascript_", "application/javascript"),
    ("_repr_pdf_", "application/pdf"),
)
# Values of these exact types never carry rich representations, so the
# per-result attribute probing is skipped for them.
_PLAIN_TYPES = frozenset([
    int, float, complex, bool, str, bytes, bytearray, list, tuple, dict,
    set, frozenset, range, type(None),
])
_SKIP = object()
# The env of an execute request that changes nothing (what most runs carry).
_NO_ENV_CHANGE = {"context": {"set": {}, "unset": []}, "exec": {"set": {}, "unset": []}}
# How the host's execute request ends when its env changes nothing and it
# carries no cwd. At the end of a JSON text these bytes can only be the
# object's last member: if a string were open before them, the first quote
# would close it and leave `env` as a bare word. So the text without them is
# the same request without `env`, which then is _NO_ENV_CHANGE itself: it is
# neither decoded nor compared.
_NO_ENV_CHANGE_TAIL = ',"env":{"context":{"set":{},"unset":[]},"exec":{"set":{},"unset":[]}}}'
_NO_ENV_CHANGE_CUT = -len(_NO_ENV_CHANGE_TAIL)

_G = globals()
# The C functions, not the signal module's wrappers: those convert every
# result to an enum, which costs more than the system call on this hot path.
_signal = _csignal.signal
_getsignal = _csignal.getsignal
_SIGINT = int(signal.SIGINT)
_sigmask = getattr(_csignal, "pthread_sigmask", None)
_SIG_BLOCK = int(getattr(signal, "SIG_BLOCK", 0))
_SIG_UNBLOCK = int(getattr(signal, "SIG_UNBLOCK", 1))
_SIGINT_SET = {_SIGINT}
_perf = time.perf_counter
_getcwdb = os.getcwdb
_read = os.read
_write = os.write
_main_ident = _thread.get_ident()
# Reentrant: a user flush() or _repr_ method may itself call display().
_lock = _thread.RLock()
# The decoder's scanner (C), called directly: json.loads() on bytes first
# guesses their encoding and wraps the scan in Python-level checks, and even
# raw_decode() is a Python frame around it, which costs more than scanning a
# request. It raises StopIteration, with the index, where no value starts.
_scan_json = json.JSONDecoder().scan_once
_encode = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
# What _encode does with a str, without its Python-level type dispatch.
_encode_str = json.encoder.encode_basestring
_TOKEN_RE = re.compile(r"[\w.]*$")
# A last line that certainly holds a statement without a value: an assignment to a dotted name
# or an import, at column 0, with no quote, backslash, comment, ';' or ':'. Such a line is whole
# tokens and one simple statement, not the tail of a string; brackets balanced on it close none
# opened before it (a cell ending inside an earlier bracket or string is a SyntaxError whichever
# way it is compiled).
_NO_VALUE_TAIL_RE = re.compile(
    r"(?:[A-Za-z_][\w.]*[ \t]*[-+*/%&|^@]?=(?!=)|(?:import|from)[ \t])[^;:'\"\\#\r]*\Z",
    re.ASCII)
_NONCE_RE = re.compile(r"[0-9A-Fa-f]{1,64}$")

_rbuf = bytearray()
_mark_prefix = b""
_mark_fds = ()
# Whether the saved fd 1/2 are pipes, whose unread bytes FIONREAD counts.
_marks_optional = False
_ioctl = fcntl.ioctl
_FIONREAD = termios.FIONREAD
_NO_BYTES = b"\0\0\0\0"
# FIONREAD's answer lands here. A mutable buffer, because ioctl() first tries to parse its
# argument as writable and, for immutable bytes, formats an error message before falling back:
# that costs more than the system call.
_unread = bytearray(4)
_seq = 0
_fflush = None
# The text layers _setup_stdio left on fd 1 and 2: they write through to unbuffered files, so
# while they are in place and still write through they hold nothing to flush.
_std_out = None
_std_err = None
_ns = None
_loop = None
_current_id = None
# The working directory at the last `done`: os.getcwdb(), as a string, and as
# its JSON text in UTF-8.
_cwd_raw = None
_cwd_text = None
_cwd_json = None
_armed = False
# A SIGINT came while no cell ran (see _on_sigint).
_missed = False
_compile_flags = _TOP_LEVEL_AWAIT
_cell_counter = 0
_use_jedi = True
_jedi = None
_INF = float("inf")
# The protocol revision the host takes (its init says; 0 when it does not).
_host_revision = 0
# figure_chart.py, which turns a matplotlib figure into its chart data: its path from init, and
# its figure_chart() once a figure has been shown (False when it cannot be loaded).
_chart_path = None
_chart_function = None
_helper_paths = {}
# The running cell's client can answer questions: its execute said "input": true (revision 2).
_input_allowed = False
_real_input = builtins.input


def _replace_error(err):
    return ("\ufffd", err.end)


# Lone surrogates in user strings cannot be encoded as UTF-8; they must not
# turn into an unparsable frame.
codecs.register_error("replhost.replace", _replace_error)


# ---------------------------------------------------------------- transport

def _write_all(fd, data):
    n = os.write(fd, data)
    if n == len(data):
        return
    view = memoryview(data)
    while n < len(view):
        n += os.write(fd, view[n:])


def _scrub(value):
    if isinstance(value, dict):
        return {str(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v) for v in value]
    if isinstance(value, float):
        return value if value == value and value not in (
            float("inf"), float("-inf")) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return repr(value)


def _shrink(value, limit=1 << 20):
    if isinstance(value, str):
        if len(value) > limit:
            return value[:limit] + "\n[truncated by replhost: %d characters]" % len(value)
        return value
    if isinstance(value, dict):
        if "text/plain" in value and len(value) > 1:
            value = {"text/plain": value["text/plain"]}
        return {k: _shrink(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrink(v, limit) for v in value[:10000]]
    return value


def _send(ev):
    try:
        text = _encode(ev)
    except (TypeError, ValueError):
        text = _encode(_scrub(ev))
    payload = text.encode("utf-8", "replhost.replace")
    if len(payload) > _SHRINK_AT:
        size = len(payload)
        payload = _encode(_shrink(ev)).encode("utf-8", "replhost.replace")
        if len(payload) > _SHRINK_AT:
            payload = _encode(_shrink(ev, 1 << 10)).encode("utf-8", "replhost.replace")
        _send({"type": "log", "level": "warning", "message":
               "%s event of %d bytes exceeds the frame limit; sent without rich data "
               "and with long texts cut" % (ev.get("type"), size)})
    try:
        _write_all(_EVT_FD, b"%d\n" % len(payload) + payload)
    except OSError:
        # Nobody reads our events any more: the host is gone.
        os._exit(1)


def _flush_std():
    out, err, sout, serr = sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__
    # reconfigure(write_through=True) flushes, so a layer that writes through now holds nothing.
    if not (out is _std_out and err is _std_err and sout is out and serr is err
            and out.write_through and err.write_through):
        _flush_streams(out, err, sout, serr)
    if _fflush is not None:
        try:
            _fflush(None)
        except Exception:
            pass


def _flush_streams(out, err, sout, serr):
    # Each stream once; usually the last two are the first two.
    for s in (out,
              err if err is not out else None,
              sout if sout is not out and sout is not err else None,
              serr if serr is not out and serr is not err and serr is not sout else None):
        if s is not None:
            try:
                s.flush()
            except Exception:
                pass


def _write_mark(final=False):
    """Flushes, then writes a mark; its seq, or None when `final` (the mark of
    `done`) finds the pipes drained and writes none."""
    global _seq
    _flush_std()
    # Both output pipes empty: the host has read every byte written to them
    # so far, and it places an event without a mark after all it had read
    # when it read the event (protocol section 5). For `done` the mark can
    # then be left out, which saves two writes per run and the host's reads
    # of them. Not for other events: output the cell writes after them could
    # be read before them. Checked after flushing: what was just flushed must
    # be read first.
    if final and _marks_optional:
        try:
            _ioctl(_mark_fds[0], _FIONREAD, _unread)
            if _unread == _NO_BYTES:
                _ioctl(_mark_fds[1], _FIONREAD, _unread)
                if _unread == _NO_BYTES:
                    return None
        except OSError:
            pass
    # Numbered before writing: if one stream got it and the other did not,
    # the next mark still supersedes it on both.
    _seq += 1
    mark = _mark_prefix + b"%d\x07" % _seq
    for fd in _mark_fds:
        try:
            os.write(fd, mark)
        except OSError:
            pass
    return _seq


def _emit(ev, mark=False, final=False):
    # While user code runs, SIGINT raises KeyboardInterrupt at any bytecode;
    # half a frame on fd 4 would be a protocol violation, so the signal waits
    # until the event is out.
    block = _armed and _sigmask is not None and _thread.get_ident() == _main_ident
    try:
        if block:
            _sigmask(_SIG_BLOCK, _SIGINT_SET)
        with _lock:
            if mark:
                seq = _write_mark(final)
                if seq is not None:
                    ev["mark"] = seq
            _send(ev)
    finally:
        # Unblock rather than restore a saved mask: a KeyboardInterrupt may
        # surface between the call and storing its result.
        if block:
            _sigmask(_SIG_UNBLOCK, _SIGINT_SET)


def _log(level, message):
    _emit({"type": "log", "level": level, "message": message})


def _fatal(message):
    try:
        _log("error", message)
    finally:
        _flush_std()
        os._exit(2)


def _read_frame():
    """Next request object, or None on a clean EOF. Malformed input is fatal."""
    if not _rbuf:
        chunk = _read(_REQ_FD, 1 << 16)
        if not chunk:
            return None
        # A read most often brings exactly one whole frame: then it is taken
        # from the bytes read, without a pass through the buffer.
        nl = chunk.find(b"\n")
        header = chunk[:nl]
        if 0 < nl <= 20 and header.isdigit() and len(chunk) - nl - 1 == int(header):
            return _parse_request(chunk[nl + 1:])
        _rbuf.extend(chunk)
    while True:
        nl = _rbuf.find(b"\n")
        if nl >= 0:
            break
        if len(_rbuf) > 20:
            _fatal("malformed frame header")
        chunk = os.read(_REQ_FD, 1 << 16)
        if not chunk:
            if _rbuf:
                _fatal("end of input inside a frame header")
            return None
        _rbuf.extend(chunk)
    header = bytes(_rbuf[:nl])
    if not header.isdigit():
        _fatal("malformed frame header %r" % header[:32])
    length = int(header)
    if length > _MAX_FRAME:
        _fatal("frame of %d bytes exceeds the limit" % length)
    end = nl + 1 + length
    while len(_rbuf) < end:
        chunk = os.read(_REQ_FD, max(end - len(_rbuf), 1 << 16))
        if not chunk:
            _fatal("end of input inside a frame")
        _rbuf.extend(chunk)
    payload = bytes(_rbuf[nl + 1:end])
    del _rbuf[:end]
    return _parse_request(payload)


def _parse_request(payload):
    try:
        # Host → worker JSON is ASCII (protocol section 2); UTF-8 accepts it.
        text = payload.decode("utf-8")
        env_unchanged = text.endswith(_NO_ENV_CHANGE_TAIL)
        if env_unchanged:
            text = text[:_NO_ENV_CHANGE_CUT] + "}"
        req, end = _scan_json(text, len(text) - len(text.lstrip())
                              if text[:1].isspace() else 0)
        if end != len(text) and text[end:].strip():
            raise ValueError("extra data after the object")
    except StopIteration as e:
        _fatal("frame is not valid JSON: %s"
               % json.JSONDecodeError("Expecting value", text, e.value))
    except ValueError as e:
        _fatal("frame is not valid JSON: %s" % e)
    if not isinstance(req, dict) or not isinstance(req.get("type"), str):
        _fatal("frame is not a request object")
    if env_unchanged:
        req["env"] = _NO_ENV_CHANGE
    return req


# -------------------------------------------------------------------- input

# input() and getpass.getpass() of a cell whose client can answer ask the host
# (an input_request event) and wait on fd 3 for the input_reply. Without one
# they are the originals, which find the end of input on the worker's
# /dev/null stdin at once. Only the main thread asks: it is the one that reads
# fd 3 while a cell runs, and the one SIGINT interrupts.

def _asks():
    return _input_allowed and _current_id is not None and _thread.get_ident() == _main_ident


def _ask(prompt, password):
    """The answer to `prompt`: the line, or None at the end of input. An
    interrupt ends the wait with KeyboardInterrupt."""
    _emit({"type": "input_request", "id": _current_id, "prompt": prompt,
           "password": bool(password)}, mark=True)
    while True:
        req = _read_frame()
        if req is None:
            _shutdown(None)
        kind = req["type"]
        if kind == "input_reply" and req.get("target") == _current_id:
            if req.get("eof") is True:
                return None
            value = req.get("value")
            return value if isinstance(value, str) else ""
        if kind == "interrupt":
            # Its SIGINT follows the frame at once and raises in the sleep;
            # should the cell's own handler swallow it, the frame still ends
            # the wait.
            time.sleep(1)
            raise KeyboardInterrupt
        if kind == "shutdown":
            _shutdown(req)
        # Nothing else is sent while a cell runs.


def _input(prompt=""):
    # Code that put a stream of its own in sys.stdin reads from it, as the
    # builtin does.
    if not _asks() or sys.stdin is not _stdin:
        return _real_input(prompt)
    if _stdin._pending:
        # The rest of an answer that a read of sys.stdin left: the builtin
        # would read it too, after showing its prompt.
        if prompt:
            sys.stdout.write(str(prompt))
        line = _stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    line = _ask(str(prompt), False)
    if line is None:
        raise EOFError("EOF when reading a line")
    return line


_input.__doc__ = _real_input.__doc__


class _AskingReader(object):
    """What sys.stdin and its buffer share: while a cell may ask, a read
    that finds nothing left of the last answer asks for another (an
    input_request without a prompt: the code printed its own, if any), which
    arrives as a line with its line end; the end of input is the empty read,
    and a later read asks again, as a terminal's does after Ctrl-D. read()
    without a size reads up to the end of input, asking as often as it takes.
    What a cell leaves of an answer is dropped at its end (_drop_pending).
    Otherwise reads go to the worker's own standard input, /dev/null."""

    _EMPTY = ""
    _NL = "\n"

    def _convert(self, line):
        return line

    def _answer(self):
        line = _ask("", False)
        if line is None:
            return False
        self._pending += self._convert(line + "\n")
        return True

    def _take(self, n):
        taken, self._pending = self._pending[:n], self._pending[n:]
        return taken

    def readable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._real.fileno()

    def read(self, size=-1):
        if not _asks():
            return self._real.read(size)
        if size is None or size < 0:
            while self._answer():
                pass
            return self._take(len(self._pending))
        if size == 0 or (not self._pending and not self._answer()):
            return self._EMPTY
        return self._take(size)

    def readline(self, size=-1):
        if not _asks():
            return self._real.readline(size)
        if not self._pending and not self._answer():
            return self._EMPTY
        end = self._pending.find(self._NL) + 1 or len(self._pending)
        if size is not None and size >= 0:
            end = min(end, size)
        return self._take(end)


class _StdinBuffer(_AskingReader, io.BufferedIOBase):
    """sys.stdin.buffer: the same answers as bytes (UTF-8), for code that
    reads binary standard input (fileinput with mode "rb", sys.stdin.buffer)."""

    _EMPTY = b""
    _NL = b"\n"

    def __init__(self, real):
        io.BufferedIOBase.__init__(self)
        self._real = real
        self._pending = b""

    def _convert(self, line):
        return line.encode("utf-8", "surrogateescape")

    def read1(self, size=-1):
        return self.read(size if size is not None and size >= 0 else 1 << 16)

    def detach(self):
        raise io.UnsupportedOperation("the standard input of a cell cannot be detached")


class _Stdin(_AskingReader, io.TextIOBase):
    """sys.stdin of the cells: readline(), read(), readlines() and iteration
    (fileinput included) ask the host like input() does."""

    def __init__(self, real):
        io.TextIOBase.__init__(self)
        self._real = real
        self._pending = ""
        self.buffer = _StdinBuffer(getattr(real, "buffer", real))

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "strict"

    def detach(self):
        raise io.UnsupportedOperation("the standard input of a cell cannot be detached")


_stdin = None


def _drop_pending():
    if _stdin is not None:
        _stdin._pending = ""
        _stdin.buffer._pending = b""


def _patch_getpass(module):
    real = module.getpass

    def getpass(prompt="Password: ", stream=None):
        if not _asks():
            return real(prompt, stream)
        line = _ask(str(prompt), True)
        if line is None:
            raise EOFError
        return line

    getpass.__doc__ = real.__doc__
    getpass.__wrapped__ = real
    module.getpass = getpass


# ------------------------------------------------------------------ signals

# SIGINT keeps one handler for the worker's life, and `_armed` decides what a
# signal does: while a cell runs it raises KeyboardInterrupt, as the default
# handler would; otherwise it is dropped, as SIG_IGN would drop it, and only
# noted in `_missed` so that arming knows fd 3 must be looked at. Switching
# the disposition around every cell would cost two sigaction() calls per run.
# Python runs the handler in the main thread between bytecodes; a SIGINT that
# lands in a blocking read while idle makes the read retry after the handler.
def _on_sigint(signum, frame):
    global _missed
    if _armed:
        raise KeyboardInterrupt
    _missed = True


def _arm():
    global _armed
    _armed = True


def _disarm():
    global _armed
    _armed = False
    # A cell may have installed its own handler; the next one starts with
    # the driver's again, as it did when each run armed afresh.
    if _getsignal(_SIGINT) is not _on_sigint:
        _install_sigint()


def _install_sigint():
    # signal.signal() runs pending handlers before switching, and a cell's
    # handler may raise: then that signal is handled, and the next try
    # switches. A call that keeps failing is left to the next run.
    for _ in range(8):
        try:
            _signal(_SIGINT, _on_sigint)
            return
        except BaseException:
            pass


# ------------------------------------------------------------- rich output

def _method(obj, name):
    try:
        m = getattr(obj, name, None)
    except Exception:
        return None
    return m if callable(m) else None


def _json_ok(value):
    try:
        _encode(value)
        return True
    except Exception:
        return False


def _normalize(mime, value):
    if value is None:
        return _SKIP
    if mime == "application/json" or mime.endswith("+json"):
        return value if _json_ok(value) else _SKIP
    if isinstance(value, memoryview):
        value = value.tobytes()
    if isinstance(value, (bytes, bytearray)):
        if mime.startswith("text/") or mime == "image/svg+xml":
            return bytes(value).decode("utf-8", "replace")
        return binascii.b2a_base64(bytes(value), newline=False).decode("ascii")
    if isinstance(value, str):
        return value
    if mime.startswith("text/"):
        return str(value)
    return value if _json_ok(value) else _SKIP


def _png_size(png):
    if png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) >= 24:
        return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return None


def _figure_bundle(fig):
    """PNG bundle of a matplotlib figure, or None for a figure with nothing drawn."""
    if not fig.axes and not fig.lines:
        return None
    import io
    buf = io.BytesIO()
    fig.canvas.print_figure(
        buf, format="png", bbox_inches="tight", dpi=fig.dpi,
        facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())
    png = buf.getvalue()
    data = {
        "image/png": binascii.b2a_base64(png, newline=False).decode("ascii"),
        "text/plain": "<Figure size %gx%g with %d Axes>" % (
            fig.bbox.width, fig.bbox.height, len(fig.axes)),
    }
    md = {}
    size = _png_size(png)
    if size:
        md["image/png"] = {"width": size[0], "height": size[1]}
    # After the PNG: drawing it has set the tick labels the chart reads.
    chart = _figure_chart(fig)
    if chart:
        data[_CHART_MIME] = chart
    return data, md


def _load_source(path, name):
    """A module executed from the source at `path`: never imported from its file, so no
    __pycache__ is written into the driver's directory, which may be shared or read-only."""
    with open(path, "rb") as f:
        source = f.read()
    module = types.ModuleType(name)
    module.__file__ = path
    exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)
    return module


def _figure_chart(fig):
    global _chart_function
    if _chart_function is None:
        _chart_function = False
        if _chart_path is not None:
            try:
                _chart_function = _load_source(_chart_path, "_replhost_figure_chart").figure_chart
            except Exception as e:
                _log("warning", "cannot load the chart extractor: %s: %s" % (type(e).__name__, e))
    if not _chart_function:
        return None
    try:
        chart = _chart_function(fig)
    except Exception as e:
        _log("warning", "no chart data for a figure: %s: %s" % (type(e).__name__, e))
        return None
    return chart if _json_ok(chart) else None


def _json_value(value):
    """A table cell as JSON: NaN, NaT and None as null, times in ISO 8601, numbers as numbers,
    anything else as its text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (_INF, -_INF) else None
    iso = getattr(value, "isoformat", None)
    if iso is not None:
        try:
            if value != value:  # NaT
                return None
        except Exception:
            pass
        try:
            return iso()
        except Exception:
            return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        return str(value)
    if f != f:
        return None
    if isinstance(value, complex):
        return str(value)
    return f if f not in (_INF, -_INF) else None


def _column(values):
    return [_json_value(v) for v in values.tolist()]


def _table_data(obj, pandas, max_rows=_DATA_MAX_ROWS):
    """The application/vnd.replhost.data+json of a DataFrame or Series: its columns in order,
    each with its values as a list (at most max_rows of them), and the index."""
    frame = obj.to_frame() if isinstance(obj, pandas.Series) else obj
    total = len(frame)
    shown = frame.iloc[:max_rows] if total > max_rows else frame
    columns = []
    for i, name in enumerate(shown.columns):
        column = shown.iloc[:, i]
        columns.append({"name": _json_value(name) if isinstance(name, (str, int)) else str(name),
                        "dtype": str(column.dtype), "values": _column(column)})
    index = shown.index
    return {
        "columns": columns,
        "index": {"name": None if index.name is None else str(index.name),
                  "values": _column(index)},
        "rows": len(shown),
        "total_rows": total,
        "truncated": total > len(shown),
    }


def _close_figure(fig):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        try:
            plt.close(fig)
        except Exception:
            pass


def _rich(obj, data, md):
    if isinstance(obj, type):
        return
    figmod = sys.modules.get("matplotlib.figure")
    if figmod is not None and isinstance(obj, figmod.Figure):
        b = _figure_bundle(obj)
        # Shown now, so the end-of-run sweep must not show it again.
        _close_figure(obj)
        if b is not None:
            data.update(b[0])
            md.update(b[1])
        return
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(obj, (pandas.DataFrame, pandas.Series)):
        try:
            data[_DATA_MIME] = _table_data(obj, pandas)
        except Exception as e:
            _log("warning", "no table data for a %s: %s: %s" % (
                type(obj).__name__, type(e).__name__, e))
    # Objects answering every attribute (mocks, proxies) would otherwise
    # "implement" every _repr_*_ method.
    try:
        if getattr(obj, "_ipython_canary_method_should_not_exist_", None) is not None:
            return
    except Exception:
        return
    m = _method(obj, "_repr_mimebundle_")
    if m is not None:
        try:
            r = m(include=None, exclude=None)
        except Exception as e:
            _log("warning", "_repr_mimebundle_ of %s raised %s: %s" % (
                type(obj).__name__, type(e).__name__, e))
            r = None
        if isinstance(r, tuple) and len(r) == 2:
            r, extra = r
            if isinstance(extra, dict) and _json_ok(extra):
                md.update(extra)
        if isinstance(r, dict):
            for mime, value in r.items():
                if isinstance(mime, str):
                    v = _normalize(mime, value)
                    if v is not _SKIP:
                        data[mime] = v
    for name, mime in _REPR_METHODS:
        if mime in data:
            continue
        m = _method(obj, name)
        if m is None:
            continue
        try:
            r = m()
        except Exception as e:
            _log("warning", "%s of %s raised %s: %s" % (
                name, type(obj).__name__, type(e).__name__, e))
            continue
        if isinstance(r, tuple) and len(r) == 2:
            r, extra = r
            if isinstance(extra, dict) and _json_ok(extra):
                md[mime] = extra
        v = _normalize(mime, r)
        if v is not _SKIP:
            data[mime] = v


def _bundle(obj):
    data = {}
    md = {}
    if type(obj) not in _PLAIN_TYPES:
        try:
            _rich(obj, data, md)
        except Exception as e:
            _log("warning", "rich display of %s failed: %s: %s" % (
                type(obj).__name__, type(e).__name__, e))
    if not isinstance(data.get("text/plain"), str):
        data["text/plain"] = repr(obj)
    return data, md


def _emit_display(data, md, display_id=None, update=False):
    ev = {"type": "display", "id": _current_id, "data": data, "metadata": md}
    # A host older than revision 1 would refuse the fields: it gets an update as a display.
    if display_id is not None and _host_revision >= 1:
        ev["display_id"] = display_id
        if update:
            ev["update"] = True
    _emit(ev, mark=True)


def _clear_output(wait=False):
    """Clears what the running cell has shown; with wait, once it shows something new."""
    if _host_revision >= 1:
        _emit({"type": "clear_output", "id": _current_id, "wait": bool(wait)}, mark=True)


def _new_display_id():
    return binascii.hexlify(os.urandom(16)).decode("ascii")


def display(*objs, **kwargs):
    """Show each object as rich output (HTML, images, ...) in the cell's output.

    raw=True takes each object as a ready MIME bundle; metadata=dict adds
    display metadata; display_id (a string, or True for a new one) lets the
    display be updated later, update=True replaces the display with that id;
    clear=True clears the output first (when the new output arrives). Other
    IPython keywords are accepted and ignored. Returns a DisplayHandle when
    display_id is given, else None.
    """
    raw = kwargs.get("raw", False)
    metadata = kwargs.get("metadata")
    display_id = kwargs.get("display_id")
    update = bool(kwargs.get("update", False))
    transient = kwargs.get("transient")
    if display_id is None and isinstance(transient, dict):
        display_id = transient.get("display_id")
    if display_id is True:
        display_id = _new_display_id()
    elif display_id is not None:
        display_id = str(display_id)
    if update and display_id is None:
        raise TypeError("display_id required for update")
    if kwargs.get("clear"):
        _clear_output(wait=True)
    if not objs and display_id is not None:
        return _display_handle(display_id)
    for obj in objs:
        if raw:
            if not isinstance(obj, dict):
                raise TypeError("display(raw=True) expects a dict MIME bundle")
            data = {}
            for mime, value in obj.items():
                v = _normalize(str(mime), value)
                if v is not _SKIP:
                    data[str(mime)] = v
            md = {}
        else:
            # An object that displays itself (IPython's protocol; widgets, some plot libraries).
            own = None if type(obj) in _PLAIN_TYPES else _method(obj, "_ipython_display_")
            if own is not None:
                own()
                continue
            data, md = _bundle(obj)
        if isinstance(metadata, dict) and _json_ok(metadata):
            md.update(metadata)
        _emit_display(data, md, display_id, update)
    if display_id is not None and not update:
        return _display_handle(display_id)
    return None


def _display_handle(display_id):
    # An installed IPython's own class when it is loaded, so isinstance() checks hold.
    functions = sys.modules.get("IPython.core.display_functions")
    cls = getattr(functions, "DisplayHandle", None) if functions is not None else None
    return (cls if isinstance(cls, type) else DisplayHandle)(display_id)


def update_display(obj, *, display_id, **kwargs):
    kwargs["update"] = True
    display(obj, display_id=display_id, **kwargs)


def clear_output(wait=False):
    _clear_output(wait)


def publish_display_data(data, metadata=None, source=None, *, transient=None, **kwargs):
    display(data, raw=True, metadata=metadata, transient=transient, **kwargs)


class DisplayHandle(object):
    """What display(..., display_id=...) returns: shows and updates that display."""

    def __init__(self, display_id=None):
        self.display_id = _new_display_id() if display_id is None else display_id

    def __repr__(self):
        return "<%s display_id=%s>" % (type(self).__name__, self.display_id)

    def display(self, obj, **kwargs):
        display(obj, display_id=self.display_id, **kwargs)

    def update(self, obj, **kwargs):
        display(obj, display_id=self.display_id, update=True, **kwargs)


def _flush_figures(plt):
    try:
        from matplotlib._pylab_helpers import Gcf
        figs = [m.canvas.figure for m in Gcf.get_all_fig_managers()]
    except Exception:
        figs = [plt.figure(n) for n in plt.get_fignums()]
    try:
        for fig in figs:
            b = _figure_bundle(fig)
            if b is not None:
                _emit_display(b[0], b[1])
    finally:
        plt.close("all")


def _route_ipython(module):
    """Makes an installed IPython's display functions replhost's: outside an IPython shell they
    would print reprs, and its DisplayHandle and display_* helpers call them by name."""
    for name, value in (("display", display), ("clear_output", clear_output),
                        ("update_display", update_display),
                        ("publish_display_data", publish_display_data)):
        # Only names the module has of its own: IPython.core.display warns on access to the
        # ones it forwards.
        if name in module.__dict__:
            setattr(module, name, value)


def _patch_pyplot(plt):
    original = plt.show

    def show(*args, **kwargs):
        _flush_figures(plt)

    show.__doc__ = original.__doc__
    show.__wrapped__ = original
    plt.show = show


class _PyplotHook(object):
    """Meta path finder that patches modules right after they load.

    plt.show() must emit the open figures where it is called (ordered with
    prints); patching at import time covers the cell that first imports it.
    An installed IPython's display functions are routed to replhost's before
    any other module copies them.
    """

    _PATCHES = {
        "getpass": "_patch_getpass",
        "matplotlib.pyplot": "_patch_pyplot",
        "IPython.core.display_functions": "_route_ipython",
        "IPython.core.display": "_route_ipython",
    }

    def find_spec(self, fullname, path, target=None):
        patch = self._PATCHES.get(fullname)
        if patch is None:
            return None
        spec = None
        try:
            for finder in sys.meta_path:
                # The shim is replhost's own IPython.display: nothing to patch.
                if finder is self or isinstance(finder, _IPythonShim):
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        except Exception:
            # Let the regular import machinery find it (and report any error).
            return None
        if spec is None or spec.loader is None:
            return spec
        exec_module = getattr(spec.loader, "exec_module", None)
        if exec_module is None:
            return spec

        def patched_exec_module(module):
            mpl = sys.modules.get("matplotlib") if fullname == "matplotlib.pyplot" else None
            if mpl is not None and "MPLBACKEND" not in os.environ:
                try:
                    get = getattr(mpl.rcParams, "_get_backend_or_none", None)
                    if get is not None and get() is None:
                        mpl.use("agg")
                except Exception:
                    pass
            exec_module(module)
            try:
                _G[patch](module)
            except Exception as e:
                _log("warning", "could not patch %s: %s" % (fullname, e))

        try:
            spec.loader.exec_module = patched_exec_module
        except Exception:
            pass
        return spec


class _IPythonShim(object):
    """Meta path finder, last on sys.meta_path: where no finder before it
    finds IPython, it provides IPython.display (and IPython.core.display and
    display_functions, where libraries import from) from ipython_display.py.

    The module is executed from its source (never imported from its file), so
    no __pycache__ is written into the driver's directory, which may be
    shared or read-only.
    """

    _PACKAGES = ("IPython", "IPython.core")
    _DISPLAY = ("IPython.display", "IPython.core.display", "IPython.core.display_functions")

    def __init__(self, path):
        self._path = path
        self._module = None

    def find_spec(self, fullname, path, target=None):
        if fullname not in self._PACKAGES and fullname not in self._DISPLAY:
            return None
        from importlib.machinery import ModuleSpec
        return ModuleSpec(fullname, self, is_package=fullname in self._PACKAGES)

    def create_module(self, spec):
        return self._display_module() if spec.name in self._DISPLAY else None

    def exec_module(self, module):
        if module.__name__ == "IPython":
            module.get_ipython = _no_ipython

    def _display_module(self):
        if self._module is None:
            module = _load_source(self._path, "IPython.display")
            module._bind(display, _clear_output, DisplayHandle)
            self._module = module
        return self._module


def _no_ipython():
    """IPython's get_ipython(): None, as there is no IPython shell."""
    return None


# ---------------------------------------------------------- IPython syntax

# Cells written for IPython (E2B's clients send their code indented inside template strings, and
# users of both E2B and Jupyter write `!pip list`) are cleaned the way IPython cleans them before
# they are compiled: the indentation of the first line that is not blank is taken off every line
# that starts with it, and escape lines become calls of `__replhost__` (in builtins, so it is not
# one of the user's variables). A line is an escape only where a logical line starts, which no
# Python statement can do with `!` or `%`: valid Python never changes meaning.
_INDENTED_START = (" ", "\t", "\n", "\r", "\f")
_ESCAPE_RE = re.compile(
    r"^[ \t]*(?:[!%]|[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[!%])", re.M)
_ASSIGN_ESCAPE_RE = re.compile(r"((?:[\w.]+[ \t]*,[ \t]*)*[\w.]+)[ \t]*=[ \t]*([!%].*)\Z", re.S)
_DOLLAR_NAME_RE = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*")
_SUPPORTED_MAGICS = "!cmd, %cd, %env, %pip, %pwd, %%bash, %%sh, %%writefile or plain Python"
_previous_dir = None


class UsageError(Exception):
    """A magic used in a way replhost does not run (IPython's name for the same)."""


def _dedent_cell(code):
    lines = code.split("\n")
    for first in lines:
        if first.strip():
            break
    else:
        return code
    body = first.lstrip(" \t\f")
    indent = first[:len(first) - len(body)]
    if not indent:
        return code
    n = len(indent)
    # Blank lines stay, so line numbers in tracebacks are the client's.
    return "\n".join(line[n:] if line.startswith(indent) else
                     ("" if not line.strip() else line) for line in lines)


def _logical_line_starts(probe):
    """Numbers (1-based) of the lines on which a logical line starts, as far as `probe` can be
    tokenized: a line inside a string or inside brackets is none."""
    import io
    import tokenize
    starts = set()
    at_start = True
    skip = (tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.COMMENT)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(probe).readline):
            if tok.type == tokenize.NEWLINE:
                at_start = True
            elif tok.type in skip or tok.type == tokenize.ENDMARKER:
                continue
            elif at_start:
                starts.add(tok.start[0])
                at_start = False
    except (tokenize.TokenError, SyntaxError):
        # What was read is right; the rest is a cell the compiler will refuse.
        pass
    return starts


def _escape_call(text):
    """The expression for an escape (`!cmd`, `!!cmd`, `%magic args`) without its indentation."""
    if text.startswith("!!"):
        return "__replhost__.getoutput(%r)" % text[2:]
    if text.startswith("!"):
        return "__replhost__.system(%r)" % text[1:]
    words = text[1:].split(None, 1)
    return "__replhost__.line_magic(%r, %r)" % (words[0] if words else "",
                                                words[1].strip() if len(words) > 1 else "")


def _transform_escapes(code):
    lines = code.split("\n")
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    head = lines[first].strip() if first < len(lines) else ""
    if head.startswith("%%"):
        name, _, arg = head[2:].partition(" ")
        return "\n" * first + "__replhost__.cell_magic(%r, %r, %r)" % (
            name, arg.strip(), "\n".join(lines[first + 1:]))
    candidates = [i for i, line in enumerate(lines) if _ESCAPE_RE.match(line)]
    if not candidates:
        return code
    probe = list(lines)
    for i in candidates:
        line = lines[i]
        probe[i] = line[:len(line) - len(line.lstrip(" \t"))] + "pass"
    starts = _logical_line_starts("\n".join(probe))
    for i in candidates:
        if i + 1 not in starts:
            continue
        line = lines[i]
        text = line.lstrip(" \t")
        indent = line[:len(line) - len(text)]
        text = text.rstrip("\r")
        if text[0] in "!%":
            lines[i] = indent + _escape_call(text)
            continue
        m = _ASSIGN_ESCAPE_RE.match(text)
        if m is None:
            continue
        escape = m.group(2)
        # `x = !cmd` keeps the output, as `!!cmd` does.
        if not escape.startswith("%") and not escape.startswith("!!"):
            escape = "!" + escape
        lines[i] = indent + m.group(1) + " = " + _escape_call(escape)
    return "\n".join(lines)


def _expand(text, frame):
    """IPython's expansion of an escape's text: `{expr}` and `$name` from the caller's variables,
    `$$` a dollar, `{{`/`}}` braces. If any of it cannot be evaluated, the text is used as it is,
    so `$HOME` and awk's `{print $1}` reach the shell."""
    if "$" not in text and "{" not in text:
        return text
    glb, loc = frame.f_globals, frame.f_locals
    out = []
    i, n = 0, len(text)
    try:
        while i < n:
            c = text[i]
            if c == "$":
                if text.startswith("$$", i):
                    out.append("$")
                    i += 2
                    continue
                m = _DOLLAR_NAME_RE.match(text, i + 1)
                if m is None:
                    out.append(c)
                    i += 1
                    continue
                out.append(str(eval(m.group(0), glb, loc)))
                i = m.end()
            elif c == "{":
                if text.startswith("{{", i):
                    out.append("{")
                    i += 2
                    continue
                depth, j = 1, i + 1
                while j < n and depth:
                    depth += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                if depth:
                    return text
                out.append(str(eval(text[i + 1:j - 1], glb, loc)))
                i = j
            elif c == "}" and text.startswith("}}", i):
                out.append("}")
                i += 2
            else:
                out.append(c)
                i += 1
    except Exception:
        return text
    return "".join(out)


def _shell():
    return "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"


class _IPythonSyntax:
    """What escape lines call. Commands write straight to fd 1/2, so their output streams as any
    child process's does; their exit status is `_exit_code`, as in IPython."""

    def _run(self, argv, capture):
        import subprocess
        _flush_std()
        if capture:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        else:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL)
        _ns["_exit_code"] = done.returncode
        return done

    def system(self, cmd):
        self._run([_shell(), "-c", _expand(cmd, sys._getframe(1))], False)

    def getoutput(self, cmd):
        done = self._run([_shell(), "-c", _expand(cmd, sys._getframe(1))], True)
        return done.stdout.decode("utf-8", "replace").splitlines()

    def line_magic(self, name, arg):
        method = getattr(self, "_magic_" + name, None) if name.isidentifier() else None
        if method is None:
            if name.startswith("%"):
                raise UsageError("%%%s: a cell magic must start its cell: use it on the first line"
                                 % name)
            raise UsageError("%%%s: magics are not supported: use %s" % (name, _SUPPORTED_MAGICS))
        return method(_expand(arg, sys._getframe(1)))

    def cell_magic(self, name, arg, body):
        if name in ("bash", "sh"):
            if arg:
                raise UsageError("%%%%%s: options are not supported: use !cmd to keep "
                                 "a command's output" % name)
            self._run(["/bin/" + name, "-c", body], False)
            return None
        if name == "writefile":
            return self._writefile(_expand(arg, sys._getframe(1)), body)
        raise UsageError("%%%%%s: magics are not supported: use %s" % (name, _SUPPORTED_MAGICS))

    def _writefile(self, arg, body):
        import shlex
        words = shlex.split(arg)
        append = bool(words) and words[0] in ("-a", "--append")
        if append:
            words = words[1:]
        if len(words) != 1:
            raise UsageError("%%writefile: give one file name (and -a to append)")
        path = os.path.expanduser(words[0])
        exists = os.path.exists(path)
        print("%s %s" % ("Appending to" if append else "Overwriting" if exists else "Writing",
                         words[0]))
        with open(path, "a" if append else "w", encoding="utf-8") as f:
            f.write(body if body.endswith("\n") else body + "\n")

    def _magic_cd(self, arg):
        global _previous_dir
        import shlex
        words = shlex.split(arg)
        quiet = "-q" in words
        words = [w for w in words if w != "-q"]
        if len(words) > 1:
            raise UsageError("%cd: give one directory")
        if not words:
            target = os.path.expanduser("~")
        elif words[0] == "-":
            if _previous_dir is None:
                raise UsageError("%cd -: there is no previous directory")
            target = _previous_dir
        else:
            target = os.path.expanduser(words[0])
        before = _getcwd()
        os.chdir(target)
        _previous_dir = before
        if not quiet:
            print(_getcwd())

    def _magic_pwd(self, arg):
        return _getcwd()

    def _magic_env(self, arg):
        arg = arg.strip()
        if not arg:
            return dict(os.environ)
        if "=" in arg:
            key, _, value = arg.partition("=")
        else:
            key, _, value = arg.partition(" ")
            if not value:
                try:
                    return os.environ[key]
                except KeyError:
                    raise UsageError("%%env: environment does not have key: %s" % key) from None
        key, value = key.strip(), value.strip()
        os.environ[key] = value
        print("env: %s=%s" % (key, value))

    def _magic_pip(self, arg):
        import importlib.util
        import shlex
        if importlib.util.find_spec("pip") is None:
            raise UsageError(
                "%%pip: pip is not installed for %s: install Debian's python3-pip, or the "
                "package itself from Debian's archive (apt install python3-<name>)"
                % sys.executable)
        self._run([sys.executable, "-m", "pip"] + shlex.split(arg), False)
        print("Note: you may need to restart the kernel to use updated packages.")


# ---------------------------------------------------------------- execution

def _strip_traceback(exc):
    """Traceback of exc without the driver's own frames (or asyncio plumbing)."""
    entries = []
    tb = exc.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    first_cell = None
    for i, tb in enumerate(entries):
        if tb.tb_frame.f_code.co_filename.startswith("<cell-"):
            first_cell = i
            break
    if first_cell is None:
        if isinstance(exc, KeyboardInterrupt):
            # Interrupted inside the event loop or the driver: nothing of
            # the user's to show.
            entries = []
        else:
            last_driver = -1
            for i, tb in enumerate(entries):
                if tb.tb_frame.f_globals is _G:
                    last_driver = i
            entries = entries[last_driver + 1:]
    else:
        entries = entries[first_cell:]
    new = None
    for tb in reversed(entries):
        if tb.tb_frame.f_globals is _G:
            continue
        new = types.TracebackType(new, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return new


def _safe_str(e):
    try:
        return str(e)
    except Exception:
        return "<exception str() failed>"


def _emit_error(exc, compile_phase=False):
    if compile_phase:
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        tb = _strip_traceback(exc)
        exc.__traceback__ = tb
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = exc
        lines = traceback.format_exception(type(exc), exc, tb)
    _emit({
        "type": "error", "id": _current_id, "ename": type(exc).__name__,
        "evalue": _safe_str(exc), "traceback": "".join(lines).splitlines(),
    }, mark=True)


def _ends_with_semicolon(code, node):
    # IPython convention: a trailing ';' hides the value of the last line.
    if ";" not in code:
        return False
    try:
        line = code.split("\n")[node.end_lineno - 1]
        rest = line.encode("utf-8")[node.end_col_offset:].decode("utf-8", "replace")
    except Exception:
        return False
    return rest.lstrip().startswith(";")


def _has_no_value(code):
    """True when the cell certainly does not end with an expression statement."""
    tail = code.rstrip()
    line = tail[tail.rfind("\n") + 1:]
    if _NO_VALUE_TAIL_RE.match(line) is None:
        return False
    if ")" in line or "]" in line or "}" in line:
        return (line.count("(") == line.count(")") and line.count("[") == line.count("]")
                and line.count("{") == line.count("}"))
    return True


def _compile_cell(code, filename):
    global _compile_flags
    if _has_no_value(code):
        # Compiled once, from the source: a tree would be built only to find no value in it,
        # and compiling a tree costs about as much as compiling the source again.
        body = compile(code, filename, "exec", _compile_flags, True)
        _compile_flags |= body.co_flags & _FUTURE_MASK
        return body, None, False
    tree = compile(code, filename, "exec", ast.PyCF_ONLY_AST | _compile_flags, True)
    nodes = tree.body
    last = None
    if nodes and isinstance(nodes[-1], ast.Expr):
        last = nodes.pop()
    body = None
    if nodes:
        body = compile(tree, filename, "exec", _compile_flags, True)
        # `from __future__ import ...` lasts for the session, as in the REPL.
        _compile_flags |= body.co_flags & _FUTURE_MASK
    expr = None
    quiet = False
    if last is not None:
        expr = compile(ast.Expression(last.value), filename, "eval", _compile_flags, True)
        quiet = _ends_with_semicolon(code, last)
    return body, expr, quiet


def _run_coroutine(coro):
    global _loop
    import asyncio
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    # User code may have run asyncio.run(), which unsets the current loop.
    asyncio.set_event_loop(_loop)
    task = _loop.create_task(coro)
    try:
        return _loop.run_until_complete(task)
    except BaseException:
        if not task.done():
            # A KeyboardInterrupt leaves the task pending; it would resume in
            # the next cell.
            task.cancel()
            try:
                _loop.run_until_complete(task)
            except BaseException:
                pass
        elif not task.cancelled():
            task.exception()
        raise


def _run_code(co):
    if co.co_flags & _CO_COROUTINE:
        return _run_coroutine(eval(co, _ns))
    return eval(co, _ns)


def _sweep_figures(plt, status):
    try:
        try:
            _arm()
            _flush_figures(plt)
        finally:
            _disarm()
    except KeyboardInterrupt:
        if status == "ok":
            status = "interrupted"
    except BaseException as e:
        if status == "ok":
            _emit_error(e)
            status = "error"
        else:
            _log("warning", "rendering figures failed: %s: %s" % (type(e).__name__, e))
    return status


def _interrupt_waiting():
    """True when a request waits on fd 3 while a cell runs. The host sends
    nothing but `interrupt` (or `shutdown`) then, and it sends the frame before
    its SIGINT, so a signal that came before SIGINT was armed is not lost.

    Called right after arming, when _rbuf is empty and a SIGINT was dropped
    since the last call. Only then can a frame wait unseen: a signal that
    arrives once armed raises by itself, and an interrupt frame always comes
    with a signal, written before it."""
    global _missed
    _missed = False
    try:
        _ioctl(_REQ_FD, _FIONREAD, _unread)
        return _unread != _NO_BYTES
    except OSError:
        return False


def _run_cell(code, count):
    global _cell_counter
    _cell_counter += 1
    filename = "<cell-%s>" % count if isinstance(count, int) else "<cell-x%d>" % _cell_counter
    shown = code
    if code[:1] in _INDENTED_START:
        shown = _dedent_cell(code)
    if ("!" in shown or "%" in shown) and _ESCAPE_RE.search(shown):
        code = _transform_escapes(shown)
    else:
        code = shown
    linecache.cache[filename] = (len(shown), None, shown.splitlines(True), filename)
    status = "ok"
    err = None
    compile_err = None
    bundle = None
    try:
        try:
            # No `started`: the driver declares `implicit_started`, so the
            # host counts the run as started once it has sent the request and
            # may signal from then on. A SIGINT that came while the driver was
            # not armed was dropped, but its interrupt frame is waiting on fd 3.
            _arm()
            if _rbuf or (_missed and _interrupt_waiting()):
                raise KeyboardInterrupt
            try:
                body, expr, quiet = _compile_cell(code, filename)
            except (SyntaxError, ValueError, OverflowError, MemoryError,
                    RecursionError, UnicodeError) as e:
                compile_err = e
                body = expr = None
            if body is not None:
                _run_code(body)
            if expr is not None:
                value = _run_code(expr)
                if value is not None and not quiet:
                    _ns["_"] = value
                    bundle = _bundle(value)
        finally:
            _disarm()
    except KeyboardInterrupt as e:
        status = "interrupted"
        err = e
    except BaseException as e:
        status = "error"
        err = e
    if err is not None:
        _emit_error(err)
        err = None
    elif compile_err is not None:
        _emit_error(compile_err, compile_phase=True)
        return "error"
    elif bundle is not None:
        _emit({"type": "result", "id": _current_id, "execution_count": count,
               "data": bundle[0], "metadata": bundle[1]}, mark=True)
    plt = sys.modules.get("matplotlib.pyplot")
    return status if plt is None else _sweep_figures(plt, status)


def _set_env_layer(layer, errors):
    if not isinstance(layer, dict) or not (layer.get("set") or layer.get("unset")):
        return
    sets = layer.get("set") or {}
    for key, value in sets.items():
        try:
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value if isinstance(value, str) else str(value)
        except Exception as e:
            errors.append(e)
    for key in layer.get("unset") or ():
        try:
            del os.environ[key]
        except KeyError:
            pass
        except Exception as e:
            errors.append(e)


def _apply_env(env, errors):
    saved = {}
    if env == _NO_ENV_CHANGE or not isinstance(env, dict):
        return saved
    _set_env_layer(env.get("context"), errors)
    layer = env.get("exec")
    if isinstance(layer, dict) and (layer.get("set") or layer.get("unset")):
        for key in list(layer.get("set") or ()) + list(layer.get("unset") or ()):
            if isinstance(key, str):
                saved[key] = os.environ.get(key)
        _set_env_layer(layer, errors)
    return saved


def _restore_env(saved):
    for key, value in saved.items():
        try:
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        except Exception:
            pass


def _getcwd():
    try:
        return os.getcwd()
    except OSError:
        pass
    try:
        path = os.readlink("/proc/self/cwd")
    except OSError:
        return None
    if path.endswith(" (deleted)"):
        path = path[:-len(" (deleted)")]
    return path


def _update_cwd(raw):
    """Sets the _cwd_* globals from os.getcwdb(), or None when it failed."""
    global _cwd_raw, _cwd_text, _cwd_json
    _cwd_raw = raw
    _cwd_text = _getcwd() if raw is None else os.fsdecode(raw)
    _cwd_json = None if _cwd_text is None else \
        _encode_str(_cwd_text).encode("utf-8", "replhost.replace")


def _emit_done(rid, status, count, duration):
    # The system call is made every time: a directory can change its path
    # without a chdir (a parent renamed), and C code can chdir unseen.
    # Decoding and encoding it again are only done when its bytes change.
    try:
        raw = _getcwdb()
    except OSError:
        raw = None
    if raw is None or raw != _cwd_raw:
        _update_cwd(raw)
    _lock.acquire()
    try:
        seq = _write_mark(True)
        # The common shape is formatted directly: json.dumps costs more than
        # the rest of sending it. The driver's statuses are plain ASCII.
        if type(rid) is str and type(count) is int and _cwd_json is not None:
            payload = b'{"type":"done","id":%s,"status":"%s","execution_count":%d,' \
                      b'"cwd":%s,"duration_ms":%.3f%s}' % (
                          _encode_str(rid).encode("utf-8", "replhost.replace"),
                          status.encode(), count, _cwd_json, duration,
                          b"" if seq is None else b',"mark":%d' % seq)
            frame = b"%d\n" % len(payload) + payload
            try:
                n = _write(_EVT_FD, frame)
                if n != len(frame):
                    _write_all(_EVT_FD, frame[n:])
            except OSError:
                os._exit(1)
            return
        ev = {"type": "done", "id": rid, "status": status, "execution_count": count,
              "cwd": _cwd_text, "duration_ms": round(duration, 3)}
        if seq is not None:
            ev["mark"] = seq
        _send(ev)
    finally:
        _lock.release()


def _execute(req):
    global _current_id, _input_allowed
    rid = req.get("id")
    code = req.get("code", "")
    count = req.get("execution_count")
    if not isinstance(code, str):
        _emit({"type": "error_reply", "id": rid, "reason": "execute needs a string code"})
        return
    env = req.get("env")
    cwd = req.get("cwd")
    errors = None
    saved = None
    status = "error"
    t0 = _perf()
    _current_id = rid
    _input_allowed = _host_revision >= 2 and req.get("input") is True
    try:
        if cwd or (env is not _NO_ENV_CHANGE and env != _NO_ENV_CHANGE):
            errors = []
            saved = _apply_env(env, errors)
            if cwd and not errors:
                try:
                    os.chdir(cwd)
                except Exception as e:
                    errors.append(e)
            t0 = _perf()
        if errors:
            # Running in the wrong directory or environment could do harm.
            for e in errors:
                _emit_error(e, compile_phase=True)
        else:
            status = _run_cell(code, count)
    except BaseException as e:
        status = "error"
        try:
            _log("error", "driver failure during execute: " + "".join(
                traceback.format_exception(type(e), e, e.__traceback__)))
        except BaseException:
            pass
    finally:
        duration = (_perf() - t0) * 1000.0
        if saved:
            _restore_env(saved)
        _drop_pending()
        _emit_done(rid, status, count, duration)
        _current_id = None
        _input_allowed = False


# ------------------------------------------------------ completion, variables

def _resolve(expr):
    parts = expr.split(".")
    if not all(p.isidentifier() for p in parts):
        raise LookupError(expr)
    head = parts[0]
    if head in _ns:
        obj = _ns[head]
    elif hasattr(builtins, head):
        obj = getattr(builtins, head)
    else:
        raise LookupError(head)
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def _basic_complete(code, cursor):
    token = _TOKEN_RE.search(code, 0, cursor).group()
    if token[:1].isdigit():
        return [], cursor
    if "." in token:
        expr, _, prefix = token.rpartition(".")
        try:
            names = dir(_resolve(expr))
        except Exception:
            return [], cursor
    else:
        prefix = token
        names = list(_ns) + dir(builtins) + keyword.kwlist
    hide_private = not prefix.startswith("_")
    matches = sorted(set(
        n for n in names
        if isinstance(n, str) and n.startswith(prefix)
        and not (hide_private and n.startswith("_"))))
    return matches, cursor - len(prefix)


def _jedi_complete(code, cursor):
    global _jedi
    if _jedi is None:
        try:
            import logging
            import jedi
            for name in ("jedi", "parso"):
                logging.getLogger(name).addHandler(logging.NullHandler())
            # Completion must not run user code (properties, descriptors).
            jedi.settings.allow_unsafe_interpreter_executions = False
            # Matches must extend what was typed: the host replaces
            # [cursor_start, cursor_end) with them.
            jedi.settings.case_insensitive_completion = False
            _jedi = jedi
        except Exception:
            _jedi = False
    if not _jedi:
        return None
    before = code[:cursor]
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1)
    matches = []
    start = None
    for c in _jedi.Interpreter(code, [_ns]).complete(line, column):
        rest = c.complete
        if rest is None:
            continue
        name = c.name
        s = cursor - (len(name) - len(rest))
        if start is None:
            start = s
        elif s != start:
            continue
        matches.append(name)
    if not matches:
        return None
    return matches, start


def _complete(req):
    code = req.get("code", "")
    if not isinstance(code, str):
        code = ""
    cursor = req.get("cursor")
    if not isinstance(cursor, int) or cursor < 0 or cursor > len(code):
        cursor = len(code)
    found = None
    if _use_jedi:
        try:
            found = _jedi_complete(code, cursor)
        except Exception as e:
            _log("debug", "jedi completion failed: %s: %s" % (type(e).__name__, e))
    if found is None:
        found = _basic_complete(code, cursor)
    _emit({"type": "complete_reply", "id": req.get("id"), "matches": found[0],
           "cursor_start": found[1], "cursor_end": cursor})


class _VarRepr(reprlib.Repr):
    # reprlib sorts dict keys; the namespace view should show dicts as repr() does.
    def repr_dict(self, x, level):
        n = len(x)
        if n == 0:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = []
        for i, (k, v) in enumerate(x.items()):
            if i >= self.maxdict:
                pieces.append("...")
                break
            pieces.append("%s: %s" % (self.repr1(k, level - 1), self.repr1(v, level - 1)))
        return "{%s}" % ", ".join(pieces)


_var_repr = _VarRepr()
_var_repr.maxlevel = 3
_var_repr.maxdict = _var_repr.maxlist = _var_repr.maxtuple = 20
_var_repr.maxset = _var_repr.maxfrozenset = _var_repr.maxdeque = _var_repr.maxarray = 20


def _short_repr(value, limit):
    _var_repr.maxstring = _var_repr.maxother = _var_repr.maxlong = max(limit, 8)
    try:
        text = _var_repr.repr(value)
    except Exception as e:
        text = "<repr failed: %s>" % type(e).__name__
    if len(text) > limit:
        text = text[:max(limit - 1, 0)] + "\u2026"
    return text


# A variable's table (the data+json form) carries at most this many rows and columns, so that
# listing the variables stays cheap however large the frames are.
_VAR_TABLE_ROWS = 200
_VAR_TABLE_COLUMNS = 50


def _from_numeric_library(value):
    # Only these are asked for a shape: any other object's attributes may run user code.
    return type(value).__module__.split(".")[0] in ("numpy", "pandas")


def _var_size(value):
    """A short size: a shape for arrays and frames, a length for built-in containers."""
    if _from_numeric_library(value):
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
            return " \u00d7 ".join(str(n) for n in shape) if shape else "1"
        return None
    if isinstance(value, (str, bytes, bytearray, list, tuple, dict, set, frozenset)):
        return str(len(value))
    return None


def _rows_table(columns, rows, total):
    return {
        "columns": [{"name": c, "dtype": "object", "values": [_json_value(v) for v in vals]}
                    for c, vals in zip(columns, rows)],
        "index": {"name": None, "values": list(range(len(rows[0]) if rows else 0))},
        "rows": len(rows[0]) if rows else 0,
        "total_rows": total,
        "truncated": total > (len(rows[0]) if rows else 0),
    }


def _var_table(value):
    """The value as a data+json table when it is one: a DataFrame or Series, a 1-D or 2-D
    array, a list or tuple (of scalars, of rows, or of dicts); else None."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, (pandas.DataFrame, pandas.Series)):
        frame = value.to_frame() if isinstance(value, pandas.Series) else value
        return _table_data(frame.iloc[:, :_VAR_TABLE_COLUMNS], pandas, _VAR_TABLE_ROWS)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray) and value.ndim in (1, 2):
        shown = value[:_VAR_TABLE_ROWS]
        if value.ndim == 1:
            return _rows_table(["value"], [shown.tolist()], len(value))
        shown = shown[:, :_VAR_TABLE_COLUMNS]
        return _rows_table(list(range(shown.shape[1])), shown.T.tolist(), len(value))
    if not isinstance(value, (list, tuple)) or not value:
        return None
    shown = value[:_VAR_TABLE_ROWS]
    if all(isinstance(r, dict) for r in shown):
        keys = []
        for r in shown:
            for k in r:
                if k not in keys and len(keys) < _VAR_TABLE_COLUMNS:
                    keys.append(k)
        return _rows_table([str(k) for k in keys], [[r.get(k) for r in shown] for k in keys],
                           len(value))
    if all(isinstance(r, (list, tuple)) for r in shown):
        width = min(max(len(r) for r in shown), _VAR_TABLE_COLUMNS)
        return _rows_table(list(range(width)),
                           [[r[i] if i < len(r) else None for r in shown] for i in range(width)],
                           len(value))
    return _rows_table(["value"], [list(shown)], len(value))


def _variables(req):
    limit = req.get("max_repr")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        limit = 200
    out = []
    for name, value in list(_ns.items()):
        if not isinstance(name, str) or name.startswith("_"):
            continue
        try:
            tname = type(value).__name__
        except Exception:
            tname = "?"
        entry = {"name": name, "type": tname, "repr": _short_repr(value, limit)}
        try:
            size = _var_size(value)
            if size is not None:
                entry["size"] = size
            table = _var_table(value)
            if table is not None:
                entry["table"] = table
        except Exception as e:
            _log("debug", "no size or table for %s: %s: %s" % (name, type(e).__name__, e))
        out.append(entry)
    _emit({"type": "variables_reply", "id": req.get("id"), "variables": out})


# ----------------------------------------------------------------- snapshots

# The bound on a snapshot's pickled size (init option snapshot_max_bytes): past it the host is
# told so and replays the history instead. 16 MiB leaves a frame of base64 well under 64 MiB.
_snapshot_max = 16 << 20


def _pickler():
    """dill when the interpreter has it (functions, lambdas and classes defined
    in cells are pickled by value), else the standard pickle. Imported late, once
    __main__ is the user's namespace, which dill keeps by reference."""
    try:
        import dill
        return "python-dill", dill
    except ImportError:
        import pickle
        return "python-pickle", pickle


def _snapshot_payload():
    modules, values = {}, {}
    for name, value in list(_ns.items()):
        if not isinstance(name, str) or (name.startswith("__") and name.endswith("__")):
            continue
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
        else:
            values[name] = value
    return modules, values


def _dumps(pickler, fmt, obj):
    import io
    data = pickler.dumps(obj, protocol=5)
    if fmt == "python-pickle":
        # The standard pickle stores a function or class of __main__ by name, which
        # a fresh interpreter does not have: such a pickle is not a snapshot. (Made
        # here, not at start-up: the driver imports pickle only when it is asked.)
        class RefusesMain(pickler.Unpickler):
            def find_class(self, module, name):
                if module == "__main__":
                    raise pickler.UnpicklingError(
                        "%s is defined in a cell (python3-dill keeps those)" % name)
                return super().find_class(module, name)
        RefusesMain(io.BytesIO(data)).load()
    return data


def _snapshot(req):
    fmt, pickler = _pickler()
    modules, values = _snapshot_payload()
    reply = {"type": "snapshot_reply", "id": req.get("id"), "format": fmt}
    try:
        data = _dumps(pickler, fmt, {"modules": modules, "values": values, "cwd": _getcwd()})
    except BaseException:
        bad = []
        for name, value in values.items():
            try:
                _dumps(pickler, fmt, value)
            except BaseException as e:
                bad.append("%s (%s: %s)" % (name, type(e).__name__, _safe_str(e)))
        if not bad:
            bad = ["the namespace as a whole"]
        reply["error"] = "these names do not serialise: " + "; ".join(bad)
        reply["unserialisable"] = [b.split(" ", 1)[0] for b in bad]
        _emit(reply)
        return
    if len(data) > _snapshot_max:
        reply["error"] = ("the namespace pickles to %d bytes, over the snapshot bound of %d"
                          % (len(data), _snapshot_max))
        _emit(reply)
        return
    reply["data"] = binascii.b2a_base64(data, newline=False).decode("ascii")
    reply["lost"] = []
    _emit(reply)


def _restore(req):
    fmt = req.get("format")
    reply = {"type": "restore_reply", "id": req.get("id")}
    have, pickler = _pickler()
    if fmt not in ("python-pickle", "python-dill") or (fmt == "python-dill" and have != fmt):
        reply["error"] = "cannot read a %r snapshot in this interpreter" % (fmt,)
        _emit(reply)
        return
    try:
        payload = pickler.loads(binascii.a2b_base64(req.get("data") or ""))
        restored = {}
        for name, module in payload["modules"].items():
            restored[name] = __import__("importlib").import_module(module)
        restored.update(payload["values"])
    except BaseException as e:
        # Nothing of it reached the namespace: the host replays the history instead.
        reply["error"] = "%s: %s" % (type(e).__name__, _safe_str(e))
        _emit(reply)
        return
    _ns.update(restored)
    lost = []
    try:
        os.chdir(payload["cwd"])
    except (OSError, TypeError, KeyError) as e:
        lost.append("the working directory (%s)" % _safe_str(e))
    reply["lost"] = lost
    reply["cwd"] = _getcwd()
    _emit(reply)


# ------------------------------------------------------------------- control

def _exit(code):
    _flush_std()
    os._exit(code)


def _shutdown(req):
    if req is not None:
        _emit({"type": "shutdown_reply", "id": req.get("id")})
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:
        pass
    _exit(0)


def _init(req):
    global _mark_prefix, _use_jedi, _snapshot_max, _host_revision, _chart_path
    revision = req.get("revision")
    if type(revision) is int:
        _host_revision = min(revision, _REVISION)
    nonce = req.get("mark_nonce")
    if not isinstance(nonce, str) or not _NONCE_RE.match(nonce):
        _fatal("init carries no valid mark_nonce")
    _mark_prefix = b"\x1b]5253;rh;" + nonce.encode("ascii") + b";"
    options = req.get("options")
    if isinstance(options, dict) and options.get("jedi") is False:
        _use_jedi = False
    if isinstance(options, dict) and type(options.get("snapshot_max_bytes")) is int:
        _snapshot_max = options["snapshot_max_bytes"]
    if _helper_paths.get("--display-shim"):
        sys.meta_path.append(_IPythonShim(_helper_paths["--display-shim"]))
    _chart_path = _helper_paths.get("--chart-module")
    _emit({
        "type": "hello", "id": req.get("id"), "protocol": _PROTOCOL,
        "language": "python", "language_version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable, "pid": os.getpid(),
        "capabilities": {"interrupt": ["signal"], "complete": True,
                         "variables": True, "display": list(_DISPLAY_MIMES),
                         "implicit_started": True,
                         # A bound of 0 turns snapshots off: the host replays.
                         **({"snapshot": "on_request"} if _snapshot_max > 0 else {})},
    })


def _ignore(req):
    pass


def _again(req):
    _emit({"type": "error_reply", "id": req.get("id"), "reason": "already initialized"})


_HANDLERS = {
    "execute": _execute,
    "complete": _complete,
    "variables": _variables,
    "shutdown": _shutdown,
    "snapshot": _snapshot,
    "restore": _restore,
    # Only meaningful while an execution runs, and then SIGINT does the work;
    # an interrupt read while idle targets an execution that already ended.
    "interrupt": _ignore,
    # An answer that crossed the end of its cell (an interrupt came first).
    "input_reply": _ignore,
    "init": _again,
}


def _dispatch(req):
    handler = _HANDLERS.get(req["type"])
    if handler is None:
        _emit({"type": "error_reply", "id": req.get("id"), "reason": "unknown request type"})
        return
    try:
        handler(req)
    except BaseException as e:
        detail = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        _log("error", "driver failure handling %s: %s" % (req["type"], detail))
        if req["type"] != "execute":
            _emit({"type": "error_reply", "id": req.get("id"),
                   "reason": "%s: %s" % (type(e).__name__, _safe_str(e))})


def _setup_stdio():
    global _mark_fds, _marks_optional, _std_out, _std_err
    # Without -u, print() output would sit in a buffer while a child process
    # writes straight to the pipe, and the two would reorder.
    import io

    def writes_through(stream):
        return isinstance(getattr(stream, "buffer", None), io.FileIO) and \
            getattr(stream, "write_through", False)

    for fd, name in ((1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        if writes_through(old):
            continue
        try:
            new = io.TextIOWrapper(
                io.FileIO(fd, "w", closefd=False),
                encoding=getattr(old, "encoding", None) or "utf-8",
                errors=getattr(old, "errors", None) or "backslashreplace",
                write_through=True)
        except Exception:
            continue
        setattr(sys, name, new)
        setattr(sys, "__%s__" % name, new)
    if writes_through(sys.stdout) and writes_through(sys.stderr):
        _std_out, _std_err = sys.stdout, sys.stderr
    _mark_fds = (os.dup(1), os.dup(2))
    try:
        _marks_optional = all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in _mark_fds)
    except OSError:
        _marks_optional = False
    _setup_c_stdio()


def _setup_c_stdio():
    global _fflush
    try:
        import ctypes
        try:
            libc = ctypes.CDLL(None)
            fflush = libc.fflush
        except (OSError, AttributeError):
            libc = ctypes.CDLL("libc.so.6")
            fflush = libc.fflush
        fflush.argtypes = [ctypes.c_void_p]
        fflush.restype = ctypes.c_int
        _fflush = fflush
    except Exception:
        _fflush = None


def _install_system_hook():
    real_system = os.system

    def system(command):
        status = real_system(command)
        # system() ignores SIGINT in the parent while it waits, so the
        # interrupt only killed the command and a loop around it would run
        # on. Like bash, treat a command killed by SIGINT as an interrupt of
        # the whole run.
        if _armed and status & 0x7F == _SIGINT:
            raise KeyboardInterrupt
        return status

    system.__doc__ = real_system.__doc__
    system.__wrapped__ = real_system
    os.system = system


def _read_helper_paths(argv):
    """The driver's helper files, named on its command line (so that a sandbox, which shows a
    worker the files its command names, shows them too): --display-shim PATH, --chart-module PATH."""
    for i, arg in enumerate(argv[:-1]):
        if arg in ("--display-shim", "--chart-module"):
            _helper_paths[arg] = argv[i + 1]


def _setup_namespace():
    global _ns, _stdin
    # A fresh module as __main__: pickling and multiprocessing resolve
    # user classes through sys.modules["__main__"], and the driver's own
    # globals stay out of the user's sight.
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    _ns = main.__dict__
    builtins.display = display
    builtins.input = _input
    _stdin = _Stdin(sys.stdin if sys.stdin is not None else open(os.devnull))
    sys.stdin = _stdin
    if "getpass" in sys.modules:
        _patch_getpass(sys.modules["getpass"])
    builtins.__replhost__ = _IPythonSyntax()
    # Like the interactive interpreter, modules in the working directory are
    # importable; the driver's own directory (present when it runs as a
    # script without -I or -P) is not.
    script_dir_added = (sys.argv[:1] not in (["-c"], [""]) and not sys.flags.isolated
                        and not getattr(sys.flags, "safe_path", False))
    if script_dir_added and sys.path:
        sys.path[0] = ""
    elif not sys.path or sys.path[0] != "":
        sys.path.insert(0, "")
    sys.argv = [""]
    sys.meta_path.insert(0, _PyplotHook())


def _main():
    _install_sigint()
    for fd in (_REQ_FD, _EVT_FD):
        try:
            os.set_inheritable(fd, False)
        except OSError:
            sys.stderr.write("replhost python driver: fd %d is not open\n" % fd)
            sys.exit(2)
    _setup_stdio()
    _read_helper_paths(sys.argv)
    _setup_namespace()
    _install_system_hook()
    req = _read_frame()
    if req is None:
        _exit(0)
    if req["type"] != "init":
        _fatal("first request must be init, got %r" % req["type"][:40])
    _init(req)
    while True:
        try:
            req = _read_frame()
        except BaseException as e:
            # fd 3 closed or unreadable (user code can do that): no request
            # can ever arrive again.
            _fatal("cannot read requests: %s: %s" % (type(e).__name__, _safe_str(e)))
        if req is None:
            _shutdown(None)
        try:
            _dispatch(req)
        except BaseException as e:
            # Never lose the worker to a driver bug.
            try:
                _log("error", "driver loop failure: %s: %s" % (type(e).__name__, _safe_str(e)))
            except BaseException:
                pass


if __name__ == "__main__":
    _main()
