// SPDX-License-Identifier: Apache-2.0
package replhost.driver;

import java.io.BufferedInputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.regex.Pattern;

import jdk.jshell.DeclarationSnippet;
import jdk.jshell.Diag;
import jdk.jshell.EvalException;
import jdk.jshell.JShell;
import jdk.jshell.MethodSnippet;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import jdk.jshell.TypeDeclSnippet;
import jdk.jshell.UnresolvedReferenceException;
import jdk.jshell.VarSnippet;

/**
 * replhost worker driver for Java (JDK 17 or newer), on the JShell API.
 *
 * <p>Speaks worker protocol version 1: requests arrive as frames on fd 3, events leave as frames
 * on fd 4, user output goes untouched to fds 1 and 2. Snippets run in this JVM (JShell's local
 * engine), so System.out is fd 1 and child processes inherit fds 1 and 2.
 *
 * <p>Threads: the main thread evaluates; a reader thread owns fd 3 and handles {@code interrupt}
 * at once (the main thread is busy then); a SIGINT handler does the same for the signal; one
 * writer thread writes every event, so a snippet thread that JShell stops in the middle of
 * {@code display()} can never leave half a frame on fd 4.
 */
public final class Driver {
    private Driver() {
    }

    private static final int PROTOCOL = 1;
    private static final int MAX_FRAME = 64 << 20;
    // Events above this are shrunk rather than sent, leaving headroom under the host's limit.
    private static final int SHRINK_AT = MAX_FRAME - (1 << 16);
    private static final List<String> DISPLAY_MIMES = List.of("text/plain", "text/html",
            "text/markdown", "text/latex", "image/svg+xml", "image/png", "image/jpeg",
            "application/json");
    private static final Pattern NONCE = Pattern.compile("[0-9A-Fa-f]{1,64}");
    private static final Object EOF = new Object();

    // The helpers every context starts with. Plain snippets, so users can redefine them.
    private static final String[] HELPERS = {
        "void display(String mime, Object data) { replhost.driver.Api.display(mime, data); }",
        "void display(Object value) { replhost.driver.Api.display(value); }",
        "void cd(String path) { replhost.driver.Api.cd(path); }",
    };

    // ------------------------------------------------------------------ transport state

    private static InputStream requests;
    private static OutputStream events;
    private static int markFd1 = -1;
    private static int markFd2 = -1;
    private static OutputStream markOut1;
    private static OutputStream markOut2;
    private static byte[] markPrefix;
    private static long seq;
    private static PrintStream stdout;
    private static PrintStream stderr;
    private static final ExecutorService writer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "replhost-events");
        t.setDaemon(true);
        return t;
    });
    private static final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();

    // ------------------------------------------------------------------ interpreter state

    private static JShell shell;
    private static SourceCodeAnalysis analysis;
    // Guards runningId/interruptRequested, and is held while calling shell.stop() so that a stop
    // can never reach the execution after the one it was meant for.
    private static final Object lock = new Object();
    private static String runningId;
    private static boolean interruptRequested;
    // With the native library, SIGINTs are counted when they arrive (see Native.countSigints0):
    // an execution is interrupted by a signal when the count rose after it started.
    private static boolean sigintsCounted;
    private static long sigintBaseline;
    private static Thread stopper;
    private static volatile String displayTarget;
    // Snippet id -> {execution count, line of the cell where the snippet starts}, to show stack
    // frames as cell lines.
    private static final Map<String, int[]> origins = new ConcurrentHashMap<>();
    private static final java.util.Set<String> helperIds = ConcurrentHashMap.newKeySet();

    // ------------------------------------------------------------------ warm-up (see WarmUp)

    // About 300 snippets bring a trivial snippet from 8 ms to 2-4 ms of CPU; a JVM spends 1.5 to
    // 3 s of CPU on them.
    private static final int WARM_UP_SNIPPETS = 320;
    // A warm-up happens before hello, so the pool waits for it: bounded in CPU time for a slow
    // machine, and in wall time, well under the host's start timeout, for a loaded one (where it
    // then does less).
    private static final long WARM_UP_CPU_BUDGET_MS = 5000;
    private static final long WARM_UP_WALL_BUDGET_MS = 15000;

    // ------------------------------------------------------------------ events

    static void log(String level, String message) {
        if (events == null)
            return;
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("type", "log");
        ev.put("level", level);
        ev.put("message", message);
        emit(ev, false);
    }

    private static void emit(Map<String, Object> ev, boolean mark) {
        Future<?> done = writer.submit(() -> {
            writeEvent(ev, mark);
            return null;
        });
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    done.get();
                    return;
                } catch (InterruptedException e) {
                    // The event is going out anyway; a user thread keeps its interrupt.
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException)
                        throw (RuntimeException) cause;
                    if (cause instanceof Error)
                        throw (Error) cause;
                    throw new IllegalStateException(cause);
                }
            }
        } finally {
            if (interrupted)
                Thread.currentThread().interrupt();
        }
    }

    // On the writer thread only.
    private static void writeEvent(Map<String, Object> ev, boolean mark) {
        if (mark)
            ev.put("mark", writeMark());
        byte[] payload = Json.write(ev).getBytes(StandardCharsets.UTF_8);
        if (payload.length > SHRINK_AT) {
            int size = payload.length;
            payload = Json.write(shrink(ev, 1 << 20)).getBytes(StandardCharsets.UTF_8);
            if (payload.length > SHRINK_AT)
                payload = Json.write(shrink(ev, 1 << 10)).getBytes(StandardCharsets.UTF_8);
            Map<String, Object> warning = new LinkedHashMap<>();
            warning.put("type", "log");
            warning.put("level", "warning");
            warning.put("message", ev.get("type") + " event of " + size + " bytes exceeds the frame "
                    + "limit; sent without rich data and with long texts cut");
            writeFrame(Json.write(warning).getBytes(StandardCharsets.UTF_8));
        }
        writeFrame(payload);
    }

    private static void writeFrame(byte[] payload) {
        byte[] header = (payload.length + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] frame = new byte[header.length + payload.length];
        System.arraycopy(header, 0, frame, 0, header.length);
        System.arraycopy(payload, 0, frame, header.length, payload.length);
        try {
            events.write(frame);
            events.flush();
        } catch (IOException e) {
            // Nobody reads our events any more: the host is gone.
            Runtime.getRuntime().halt(1);
        }
    }

    @SuppressWarnings("unchecked")
    private static Object shrink(Object value, int limit) {
        if (value instanceof String) {
            String s = (String) value;
            if (s.length() > limit)
                return s.substring(0, limit) + "\n[truncated by replhost: " + s.length() + " characters]";
            return s;
        }
        if (value instanceof Map) {
            Map<String, Object> map = (Map<String, Object>) value;
            if (map.containsKey("text/plain") && map.size() > 1) {
                Map<String, Object> only = new LinkedHashMap<>();
                only.put("text/plain", map.get("text/plain"));
                map = only;
            }
            Map<String, Object> out = new LinkedHashMap<>();
            for (Map.Entry<String, Object> e : map.entrySet())
                out.put(e.getKey(), shrink(e.getValue(), limit));
            return out;
        }
        if (value instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object item : (List<Object>) value) {
                if (out.size() >= 10000)
                    break;
                out.add(shrink(item, limit));
            }
            return out;
        }
        return value;
    }

    private static void flushStd() {
        for (PrintStream s : new PrintStream[] {System.out, System.err, stdout, stderr}) {
            if (s != null) {
                try {
                    s.flush();
                } catch (RuntimeException e) {
                    // A broken user stream must not stop the mark.
                }
            }
        }
    }

    // On the writer thread only. Numbered before writing: if one stream got it and the other did
    // not, the next mark still supersedes it on both.
    private static long writeMark() {
        flushStd();
        seq++;
        byte[] mark = concat(markPrefix, (seq + "\u0007").getBytes(StandardCharsets.US_ASCII));
        if (markFd1 >= 0) {
            Native.write0(markFd1, mark, 0, mark.length);
            Native.write0(markFd2, mark, 0, mark.length);
        } else {
            for (OutputStream out : new OutputStream[] {markOut1, markOut2}) {
                try {
                    out.write(mark);
                } catch (IOException e) {
                    // The host releases the event after its grace period.
                }
            }
        }
        return seq;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static Map<String, Object> event(String type, Object id) {
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("type", type);
        ev.put("id", id);
        return ev;
    }

    private static void fatal(String message) {
        try {
            log("error", message);
            writer.shutdown();
            writer.awaitTermination(2, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Throwable ignored) {
            // Exiting anyway.
        }
        flushStd();
        Runtime.getRuntime().halt(2);
    }

    // ------------------------------------------------------------------ rich output

    /** Called by Api.display on the snippet's thread. */
    static void display(Map<String, Object> data, Map<String, Object> metadata) {
        String target = displayTarget;
        if (target == null) {
            log("warning", "display() outside a running execution was dropped");
            return;
        }
        Map<String, Object> ev = event("display", target);
        ev.put("data", data);
        ev.put("metadata", metadata);
        emit(ev, true);
    }

    /** The MIME bundle of a value: JShell's text, plus PNG for images. */
    static Map<String, Object> bundleOf(Object value) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("text/plain", Control.display(value));
        if (value != null && Api.isImage(value)) {
            try {
                data.put("image/png", Base64.getEncoder().encodeToString(Api.encodeImage(value, "png")));
            } catch (RuntimeException | Error e) {
                log("warning", "cannot render " + value.getClass().getName() + " as PNG: " + e);
            }
        }
        return data;
    }

    // ------------------------------------------------------------------ requests

    private static final byte[] readBuffer = new byte[1 << 16];

    // Next request, or null on a clean end of input. Malformed input is fatal.
    private static Map<String, Object> readFrame() throws IOException {
        long length = 0;
        int digits = 0;
        while (true) {
            int c = requests.read();
            if (c < 0) {
                if (digits > 0)
                    fatal("end of input inside a frame header");
                return null;
            }
            if (c == '\n')
                break;
            if (c < '0' || c > '9' || digits >= 10) {
                fatal("malformed frame header");
                return null;
            }
            length = length * 10 + (c - '0');
            digits++;
        }
        if (digits == 0) {
            fatal("malformed frame header");
            return null;
        }
        if (length > MAX_FRAME) {
            fatal("frame of " + length + " bytes exceeds the limit");
            return null;
        }
        byte[] payload = new byte[(int) length];
        int got = 0;
        while (got < length) {
            int n = requests.read(payload, got, (int) length - got);
            if (n < 0) {
                fatal("end of input inside a frame");
                return null;
            }
            got += n;
        }
        Object parsed;
        try {
            parsed = Json.parse(new String(payload, StandardCharsets.UTF_8));
        } catch (Json.ParseException e) {
            fatal("frame is not valid JSON: " + e.getMessage());
            return null;
        }
        if (!(parsed instanceof Map) || !(((Map<?, ?>) parsed).get("type") instanceof String)) {
            fatal("frame is not a request object");
            return null;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> req = (Map<String, Object>) parsed;
        return req;
    }

    private static void readRequests() {
        while (true) {
            Map<String, Object> req;
            try {
                req = readFrame();
            } catch (IOException e) {
                fatal("cannot read requests: " + e);
                return;
            }
            if (req == null) {
                queue.add(EOF);
                return;
            }
            if ("interrupt".equals(req.get("type"))) {
                // Handled here: the main thread is busy with the execution it targets.
                Object target = req.get("target");
                if (target instanceof String)
                    requestInterrupt((String) target);
                continue;
            }
            queue.add(req);
        }
    }

    // ------------------------------------------------------------------ interrupt

    // From the reader thread, for the execution `target`. Ignored while idle and for any other
    // execution.
    static void requestInterrupt(String target) {
        synchronized (lock) {
            if (runningId == null || !target.equals(runningId))
                return;
            interruptLocked();
        }
    }

    // From the Java SIGINT handler, which the JVM runs on a thread of its own, possibly late:
    // only a signal counted during the running execution interrupts it.
    private static void onSigint() {
        synchronized (lock) {
            if (runningId == null || (sigintsCounted && Native.sigints0() <= sigintBaseline))
                return;
            interruptLocked();
        }
    }

    private static void interruptLocked() {
        interruptRequested = true;
        stopLocked();
        if (stopper == null) {
            // JShell.stop() only acts while user code runs; an interrupt that lands while the
            // snippet is still being compiled is repeated until the code starts or the execution
            // ends.
            stopper = new Thread(Driver::keepStopping, "replhost-stopper");
            stopper.setDaemon(true);
            stopper.start();
        }
        lock.notifyAll();
    }

    private static void stopLocked() {
        try {
            shell.stop();
        } catch (RuntimeException e) {
            log("warning", "JShell.stop() failed: " + e);
        }
    }

    private static void keepStopping() {
        synchronized (lock) {
            while (true) {
                try {
                    lock.wait(interruptRequested ? 50 : 0);
                } catch (InterruptedException e) {
                    return;
                }
                if (interruptRequested && runningId != null)
                    stopLocked();
            }
        }
    }

    private static boolean interrupted() {
        synchronized (lock) {
            // The count answers before the Java handler has run: a child killed by the SIGINT
            // can let the snippet finish first.
            if (!interruptRequested && sigintsCounted && runningId != null
                    && Native.sigints0() > sigintBaseline)
                interruptRequested = true;
            return interruptRequested;
        }
    }

    private static void installSignalHandler() {
        // Without a handler the JVM would exit on SIGINT; with it, SIGINT is ignored while idle
        // and stops the running snippet otherwise. sun.misc.Signal (jdk.unsupported) is reached
        // reflectively so the build has no warnings about internal API.
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object signal = signalClass.getConstructor(String.class).newInstance("INT");
            Object handler = java.lang.reflect.Proxy.newProxyInstance(Driver.class.getClassLoader(),
                    new Class<?>[] {handlerClass}, (proxy, method, arguments) -> {
                        switch (method.getName()) {
                        case "handle":
                            onSigint();
                            return null;
                        case "hashCode":
                            return System.identityHashCode(proxy);
                        case "equals":
                            return proxy == arguments[0];
                        default:
                            return "replhost SIGINT handler";
                        }
                    });
            signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, handler);
            if (Native.loaded()) {
                int rc = Native.countSigints0();
                sigintsCounted = rc == 0;
                if (rc != 0)
                    log("warning", "cannot count SIGINTs (" + Native.errnoText(rc) + "); a SIGINT that "
                            + "arrives as an execution ends may interrupt the next one");
            }
        } catch (Throwable e) {
            log("warning", "cannot handle SIGINT, interrupt works through the request channel only: " + e);
        }
    }

    // ------------------------------------------------------------------ cells

    /** One snippet of a cell: its source for JShell and where it starts in the cell. */
    static final class Piece {
        final int offset;
        final String source;
        final boolean incomplete;

        Piece(int offset, String source, boolean incomplete) {
            this.offset = offset;
            this.source = source;
            this.incomplete = incomplete;
        }
    }

    /**
     * Splits a cell into snippets the way jshell reads typed lines: whole lines are added until
     * the text is a complete snippet. Unlike jshell, a snippet that lacks only its semicolon
     * continues when the next line obviously continues it (a leading {@code .}, a binary
     * operator, {@code else}, ...), so fluent chains split over lines work.
     */
    static List<Piece> split(String cell) {
        List<Piece> pieces = new ArrayList<>();
        int n = cell.length();
        int start = 0;
        int searchFrom = 0;
        while (start < n) {
            int nl = cell.indexOf('\n', searchFrom);
            int end = nl < 0 ? n : nl + 1;
            String candidate = cell.substring(start, end);
            SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(candidate);
            switch (info.completeness()) {
            case EMPTY:
                start = end;
                searchFrom = end;
                continue;
            case DEFINITELY_INCOMPLETE:
            case CONSIDERED_INCOMPLETE:
                if (end >= n) {
                    // Evaluated anyway: javac says what is missing, with a position.
                    pieces.add(new Piece(start, candidate, true));
                    start = n;
                } else {
                    searchFrom = end;
                }
                continue;
            case UNKNOWN:
                // An error no further line can fix; javac reports it.
                pieces.add(new Piece(start, candidate, false));
                start = end;
                searchFrom = end;
                continue;
            default:
                break;
            }
            String remaining = info.remaining();
            if (remaining.isBlank() && end < n && continues(cell, end)) {
                searchFrom = end;
                continue;
            }
            String source = info.source();
            int consumed = candidate.length() - remaining.length();
            pieces.add(new Piece(start, source, false));
            start += consumed;
            searchFrom = start;
        }
        return pieces;
    }

    private static final String[] CONTINUATIONS = {
        "&&", "||", "?", "::", ":", "->", "==", "!=", "<", ">", "=", "*", "%", "&", "|", "^",
        ")", "]", ",", "instanceof",
    };

    // Whether the text after `from` starts with something that can only continue the previous
    // line.
    private static boolean continues(String cell, int from) {
        int i = from;
        int n = cell.length();
        while (i < n) {
            char c = cell.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (cell.startsWith("//", i)) {
                int nl = cell.indexOf('\n', i);
                i = nl < 0 ? n : nl + 1;
            } else if (cell.startsWith("/*", i)) {
                int close = cell.indexOf("*/", i + 2);
                i = close < 0 ? n : close + 2;
            } else {
                break;
            }
        }
        if (i >= n)
            return false;
        String rest = cell.substring(i, Math.min(n, i + 12));
        for (String word : new String[] {"else", "catch", "finally"}) {
            if (rest.startsWith(word) && (rest.length() == word.length()
                    || !Character.isJavaIdentifierPart(rest.charAt(word.length()))))
                return true;
        }
        char c = rest.charAt(0);
        if (c == '.')
            return rest.length() < 2 || !Character.isDigit(rest.charAt(1));
        if (c == '+' || c == '-')
            return !(rest.startsWith("++") || rest.startsWith("--")) || rest.startsWith("->");
        if (c == '/')
            return true;
        for (String op : CONTINUATIONS) {
            if (rest.startsWith(op))
                return !op.equals("instanceof") || rest.length() == op.length()
                        || !Character.isJavaIdentifierPart(rest.charAt(op.length()));
        }
        return false;
    }

    private static boolean producesValue(Snippet s) {
        switch (s.subKind()) {
        case TEMP_VAR_EXPRESSION_SUBKIND:
        case VAR_VALUE_SUBKIND:
        case OTHER_EXPRESSION_SUBKIND:
            return true;
        default:
            return false;
        }
    }

    private static String runCell(String code, Object count) {
        int countValue = count instanceof Number ? ((Number) count).intValue() : 0;
        List<Piece> pieces = split(code);
        Map<String, Object> result = null;
        // A cell of imports and types only is a program when one of its types has a main method.
        boolean declarationsOnly = true;
        Snippet program = null;
        for (int i = 0; i < pieces.size(); i++) {
            if (interrupted())
                return reportInterrupted();
            Piece piece = pieces.get(i);
            boolean last = i == pieces.size() - 1;
            int line = lineOf(code, piece.offset);
            Control.takeValue();
            List<SnippetEvent> events = shell.eval(piece.source);
            Object value = Control.takeValue();
            forgetTemporaries(events);
            if (interrupted())
                return reportInterrupted();
            for (SnippetEvent e : events) {
                if (e.causeSnippet() != null)
                    continue; // another snippet updated because of this one
                Snippet s = e.snippet();
                origins.put(s.id(), new int[] {countValue, line});
                if (e.status() == Snippet.Status.REJECTED) {
                    reportCompileError(s, code, piece);
                    return "error";
                }
                if (e.exception() != null) {
                    reportException(e.exception());
                    return "error";
                }
                if (e.status() == Snippet.Status.RECOVERABLE_DEFINED
                        || e.status() == Snippet.Status.RECOVERABLE_NOT_DEFINED)
                    noteUnresolved(s);
                if (s.kind() == Snippet.Kind.TYPE_DECL) {
                    if (program == null && MAIN_METHOD.matcher(s.source()).find())
                        program = s;
                } else if (s.kind() != Snippet.Kind.IMPORT) {
                    declarationsOnly = false;
                }
                if (last && producesValue(s) && e.value() != null) {
                    result = event("result", displayTarget);
                    result.put("execution_count", count);
                    Map<String, Object> data = new LinkedHashMap<>();
                    data.put("text/plain", e.value());
                    if (value != null && Api.isImage(value))
                        data.putAll(withoutText(bundleOf(value)));
                    result.put("data", data);
                    result.put("metadata", new LinkedHashMap<String, Object>());
                }
            }
        }
        if (result != null)
            emit(result, true);
        if (declarationsOnly && program != null)
            return runProgram(((DeclarationSnippet) program).name());
        return "ok";
    }

    // `static void main(String[] args)`, `(String... args)` or `(String args[])`.
    private static final Pattern MAIN_METHOD = Pattern.compile(
            "\\bstatic\\b[^;{}=]*\\bvoid\\s+main\\s*\\(\\s*(?:final\\s+)?String\\s*(?:\\[\\s*\\]|\\.\\.\\.|\\w+\\s*\\[\\s*\\])");

    // A cell that is a whole program (a file of types, the first with a main method as `java
    // Hello.java` wants it) runs that main once its types are declared, with no arguments. The
    // call is the driver's own snippet: its frame is left out of tracebacks. A main that cannot
    // be called that way (a nested class's, a private one) leaves the cell as declarations.
    private static String runProgram(String type) {
        List<SnippetEvent> events = shell.eval(type + ".main(new String[0]);");
        forgetTemporaries(events);
        if (interrupted())
            return reportInterrupted();
        for (SnippetEvent e : events) {
            helperIds.add(e.snippet().id());
            if (e.causeSnippet() == null && e.exception() != null) {
                reportException(e.exception());
                return "error";
            }
        }
        return "ok";
    }

    // JShell keeps every statement and every expression's $N temporary as a snippet, and imports
    // each $N into every later snippet: after a few hundred expressions each evaluation takes
    // hundreds of milliseconds and the heap fills up. Values worth keeping are assigned to
    // variables, so the temporaries and statements are dropped once evaluated; declarations stay.
    private static void forgetTemporaries(List<SnippetEvent> events) {
        for (SnippetEvent e : events) {
            if (isTemporary(e)) {
                try {
                    shell.drop(e.snippet());
                } catch (RuntimeException ex) {
                    log("debug", "cannot drop snippet " + e.snippet().id() + ": " + ex);
                }
            }
        }
    }

    /** Whether the event's snippet is an expression temporary or a statement that was defined. */
    static boolean isTemporary(SnippetEvent e) {
        Snippet s = e.snippet();
        if (e.causeSnippet() != null || e.status() == Snippet.Status.REJECTED)
            return false;
        return s.subKind() == Snippet.SubKind.TEMP_VAR_EXPRESSION_SUBKIND || !s.kind().isPersistent();
    }

    private static Map<String, Object> withoutText(Map<String, Object> bundle) {
        Map<String, Object> out = new LinkedHashMap<>(bundle);
        out.remove("text/plain");
        return out;
    }

    private static String reportInterrupted() {
        Map<String, Object> ev = event("error", displayTarget);
        ev.put("ename", "Interrupted");
        ev.put("evalue", "the execution was interrupted");
        ev.put("traceback", List.of("Interrupted: the execution was interrupted"));
        emit(ev, true);
        return "interrupted";
    }

    private static int lineOf(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset && i < text.length(); i++) {
            if (text.charAt(i) == '\n')
                line++;
        }
        return line;
    }

    // Like jshell's "created method f(), however, it cannot be invoked until ... is declared".
    private static void noteUnresolved(Snippet s) {
        if (!(s instanceof DeclarationSnippet))
            return;
        List<String> missing = shell.unresolvedDependencies((DeclarationSnippet) s).toList();
        if (missing.isEmpty())
            return;
        String what = describe(s);
        String use = s instanceof MethodSnippet ? "invoked" : "used";
        stderr.println("note: " + what + " was defined, but cannot be " + use + " until "
                + String.join(" and ", missing) + " " + (missing.size() == 1 ? "is" : "are") + " declared");
    }

    private static String describe(Snippet s) {
        if (s instanceof MethodSnippet)
            return "method " + ((MethodSnippet) s).name() + "(" + ((MethodSnippet) s).parameterTypes() + ")";
        if (s instanceof VarSnippet)
            return "variable " + ((VarSnippet) s).name();
        if (s instanceof TypeDeclSnippet)
            return (s.subKind().toString().startsWith("INTERFACE") ? "interface " : "class ")
                    + ((TypeDeclSnippet) s).name();
        return "snippet";
    }

    private static void reportCompileError(Snippet s, String cell, Piece piece) {
        List<Diag> diags = new ArrayList<>();
        shell.diagnostics(s).filter(Diag::isError).forEach(diags::add);
        List<String> traceback = new ArrayList<>();
        String evalue = null;
        for (Diag d : diags) {
            String message = d.getMessage(Locale.getDefault());
            if (evalue == null)
                evalue = message.lines().findFirst().orElse(message);
            long pos = d.getStartPosition();
            if (pos < 0)
                pos = d.getPosition();
            int at = piece.offset + (int) Math.max(0, Math.min(pos, piece.source.length()));
            at = Math.min(at, cell.length());
            int lineStart = cell.lastIndexOf('\n', at - 1) + 1;
            int lineEnd = cell.indexOf('\n', at);
            if (lineEnd < 0)
                lineEnd = cell.length();
            int line = lineOf(cell, at);
            int column = cell.codePointCount(lineStart, at) + 1;
            List<String> lines = message.lines().toList();
            traceback.add("line " + line + ", column " + column + ": " + (lines.isEmpty() ? "" : lines.get(0)));
            for (int i = 1; i < lines.size(); i++) {
                String detail = lines.get(i).strip();
                // JShell's wrapper class has no name: "location: class" says nothing.
                if (!detail.equals("location: class"))
                    traceback.add("  " + detail);
            }
            String text = cell.substring(lineStart, lineEnd);
            traceback.add("    " + text);
            StringBuilder caret = new StringBuilder("    ");
            for (int i = lineStart; i < at; i++)
                caret.append(cell.charAt(i) == '\t' ? '\t' : ' ');
            traceback.add(caret.append('^').toString());
        }
        if (evalue == null) {
            evalue = piece.incomplete ? "the code is incomplete" : "the snippet was rejected";
            traceback.add(evalue);
        }
        Map<String, Object> ev = event("error", displayTarget);
        ev.put("ename", "CompileError");
        ev.put("evalue", evalue);
        ev.put("traceback", traceback);
        emit(ev, true);
    }

    private static final int MAX_FRAMES = 64;

    private static void reportException(Throwable ex) {
        String ename;
        String evalue;
        if (ex instanceof UnresolvedReferenceException) {
            DeclarationSnippet s = ((UnresolvedReferenceException) ex).getSnippet();
            ename = "UnresolvedReferenceException";
            evalue = "attempted to use " + describe(s) + ", which cannot be used until "
                    + String.join(" and ", shell.unresolvedDependencies(s).toList()) + " is declared";
        } else {
            ename = className(ex);
            evalue = ex.getMessage() == null ? "" : userNames(ex.getMessage());
        }
        List<String> traceback = new ArrayList<>();
        traceback.add(evalue.isEmpty() ? ename : ename + ": " + evalue);
        addFrames(ex, traceback);
        if (ename.equals("java.lang.OutOfMemoryError"))
            traceback.add("(this context's heap is limited to " + (Runtime.getRuntime().maxMemory() >> 20)
                    + " MB; a larger -Xmx in the \"jvm_options\" setting of the java language raises it)");
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        seen.add(ex);
        for (Throwable cause = ex.getCause(); cause != null && seen.add(cause); cause = cause.getCause()) {
            String msg = cause.getMessage();
            traceback.add("Caused by: " + className(cause) + (msg == null ? "" : ": " + userNames(msg)));
            addFrames(cause, traceback);
        }
        Map<String, Object> ev = event("error", displayTarget);
        ev.put("ename", ename);
        ev.put("evalue", evalue);
        ev.put("traceback", traceback);
        emit(ev, true);
    }

    // JShell compiles each snippet into a wrapper class (REPL.$JShell$12, REPL.$JShell$12B once
    // redefined), with the snippet's classes nested in it (REPL.$JShell$12$Pt). Messages that
    // name them ("because \"REPL.$JShell$13.s\" is null"), and the names of exceptions declared
    // in cells, read with the names the user wrote.
    private static final Pattern WRAPPER_PREFIX = Pattern.compile("REPL\\.\\$JShell\\$\\d+[A-Z]*[.$]");

    static String userNames(String message) {
        return WRAPPER_PREFIX.matcher(message).replaceAll("");
    }

    private static String className(Throwable t) {
        if (t instanceof EvalException)
            return userNames(((EvalException) t).getExceptionClassName());
        return userNames(t.getClass().getName());
    }

    private static void addFrames(Throwable t, List<String> out) {
        StackTraceElement[] frames = t.getStackTrace();
        int shown = 0;
        for (StackTraceElement f : frames) {
            String cls = f.getClassName();
            String file = f.getFileName();
            if (cls.startsWith("replhost.driver."))
                continue;
            if (file != null && file.startsWith("#") && helperIds.contains(file.substring(1)))
                continue;
            if (shown == MAX_FRAMES) {
                out.add("\t... " + (frames.length - MAX_FRAMES) + " more");
                break;
            }
            shown++;
            if (file != null && file.startsWith("#")) {
                String method = f.getMethodName();
                String where = cls.isEmpty() ? method : cls + "." + method;
                int[] origin = origins.get(file.substring(1));
                String location;
                if (origin != null && f.getLineNumber() > 0)
                    location = "In[" + origin[0] + "]:" + (origin[1] + f.getLineNumber() - 1);
                else
                    location = file + (f.getLineNumber() > 0 ? ":" + f.getLineNumber() : "");
                out.add("\tat " + (where.isEmpty() ? location : where + "(" + location + ")"));
            } else {
                out.add("\tat " + f);
            }
        }
    }

    // ------------------------------------------------------------------ execute

    private static void applyLayer(Object layer, List<String> errors) {
        if (!(layer instanceof Map))
            return;
        Object set = ((Map<?, ?>) layer).get("set");
        if (set instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) set).entrySet()) {
                Object value = e.getValue();
                try {
                    Native.setenv(String.valueOf(e.getKey()), value == null ? null : String.valueOf(value));
                } catch (IOException | RuntimeException ex) {
                    errors.add(ex.getMessage());
                }
            }
        }
        Object unset = ((Map<?, ?>) layer).get("unset");
        if (unset instanceof List) {
            for (Object key : (List<?>) unset) {
                try {
                    Native.setenv(String.valueOf(key), null);
                } catch (IOException | RuntimeException ex) {
                    errors.add(ex.getMessage());
                }
            }
        }
    }

    private static Map<String, String> applyEnv(Object env, List<String> errors) {
        Map<String, String> saved = new LinkedHashMap<>();
        if (!(env instanceof Map))
            return saved;
        applyLayer(((Map<?, ?>) env).get("context"), errors);
        Object exec = ((Map<?, ?>) env).get("exec");
        if (exec instanceof Map) {
            Object set = ((Map<?, ?>) exec).get("set");
            if (set instanceof Map) {
                for (Object key : ((Map<?, ?>) set).keySet())
                    saved.putIfAbsent(String.valueOf(key), System.getenv(String.valueOf(key)));
            }
            Object unset = ((Map<?, ?>) exec).get("unset");
            if (unset instanceof List) {
                for (Object key : (List<?>) unset)
                    saved.putIfAbsent(String.valueOf(key), System.getenv(String.valueOf(key)));
            }
            applyLayer(exec, errors);
        }
        return saved;
    }

    // A run's own variables are its system properties too, for the run: E2B's Java kernel
    // passes a run's env that way and its clients read System.getProperty. Returns what the
    // properties were before (null: not set).
    private static Map<String, String> applyRunProperties(Object env) {
        Map<String, String> saved = new LinkedHashMap<>();
        if (!(env instanceof Map))
            return saved;
        Object exec = ((Map<?, ?>) env).get("exec");
        Object set = exec instanceof Map ? ((Map<?, ?>) exec).get("set") : null;
        if (!(set instanceof Map))
            return saved;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) set).entrySet()) {
            String key = String.valueOf(e.getKey());
            if (key.isEmpty())
                continue;
            saved.putIfAbsent(key, System.getProperty(key));
            if (e.getValue() == null)
                System.clearProperty(key);
            else
                System.setProperty(key, String.valueOf(e.getValue()));
        }
        return saved;
    }

    private static void restoreProperties(Map<String, String> saved) {
        for (Map.Entry<String, String> e : saved.entrySet()) {
            if (e.getValue() == null)
                System.clearProperty(e.getKey());
            else
                System.setProperty(e.getKey(), e.getValue());
        }
    }

    private static void restoreEnv(Map<String, String> saved) {
        for (Map.Entry<String, String> e : saved.entrySet()) {
            try {
                Native.setenv(e.getKey(), e.getValue());
            } catch (IOException | RuntimeException ex) {
                log("warning", "cannot restore " + e.getKey() + ": " + ex.getMessage());
            }
        }
    }

    private static void execute(Map<String, Object> req) {
        Object id = req.get("id");
        Object code = req.get("code");
        Object count = req.get("execution_count");
        if (!(code instanceof String)) {
            Map<String, Object> reply = event("error_reply", id);
            reply.put("reason", "execute needs a string code");
            emit(reply, false);
            return;
        }
        List<String> errors = new ArrayList<>();
        Map<String, String> saved = new LinkedHashMap<>();
        Map<String, String> savedProperties = new LinkedHashMap<>();
        String status = "error";
        long t0 = System.nanoTime();
        displayTarget = id instanceof String ? (String) id : String.valueOf(id);
        try {
            saved = applyEnv(req.get("env"), errors);
            savedProperties = applyRunProperties(req.get("env"));
            Object cwd = req.get("cwd");
            if (cwd instanceof String && !((String) cwd).isEmpty() && errors.isEmpty()) {
                try {
                    Native.chdir((String) cwd);
                } catch (IOException | RuntimeException e) {
                    errors.add(e.getMessage());
                }
            }
            synchronized (lock) {
                runningId = displayTarget;
                interruptRequested = false;
                sigintBaseline = sigintsCounted ? Native.sigints0() : 0;
            }
            Map<String, Object> started = event("started", id);
            started.put("execution_count", count);
            emit(started, false);
            t0 = System.nanoTime();
            if (!errors.isEmpty()) {
                // Running in the wrong directory or environment could do harm.
                for (String message : errors) {
                    Map<String, Object> ev = event("error", id);
                    ev.put("ename", "EnvironmentError");
                    ev.put("evalue", message);
                    ev.put("traceback", List.of("EnvironmentError: " + message));
                    emit(ev, true);
                }
            } else {
                status = runCell((String) code, count);
            }
        } catch (Throwable e) {
            status = "error";
            log("error", "driver failure during execute: " + stackTrace(e));
            try {
                Map<String, Object> ev = event("error", id);
                boolean outOfMemory = false;
                for (Throwable t = e; t != null && !outOfMemory; t = t.getCause())
                    outOfMemory = t instanceof OutOfMemoryError;
                if (outOfMemory) {
                    // JShell keeps every declaration, and each costs more the more there are.
                    String message = "JShell ran out of memory: this context's heap is limited to "
                            + (Runtime.getRuntime().maxMemory() >> 20) + " MB";
                    ev.put("ename", "java.lang.OutOfMemoryError");
                    ev.put("evalue", message);
                    ev.put("traceback", List.of("java.lang.OutOfMemoryError: " + message,
                            "(drop large values, restart the context, or raise -Xmx in the \"jvm_options\" "
                                    + "setting of the java language)"));
                } else {
                    ev.put("ename", "DriverError");
                    ev.put("evalue", String.valueOf(e));
                    ev.put("traceback", List.of("DriverError: " + e));
                }
                emit(ev, true);
            } catch (RuntimeException ignored) {
                // Logged above; done follows.
            }
        } finally {
            double duration = (System.nanoTime() - t0) / 1e6;
            synchronized (lock) {
                runningId = null;
                interruptRequested = false;
            }
            restoreEnv(saved);
            restoreProperties(savedProperties);
            Map<String, Object> done = event("done", id);
            done.put("status", status);
            done.put("execution_count", count);
            done.put("cwd", Native.cwd());
            done.put("duration_ms", Math.round(duration * 1000) / 1000.0);
            emit(done, true);
            displayTarget = null;
        }
    }

    static String stackTrace(Throwable e) {
        java.io.StringWriter w = new java.io.StringWriter();
        e.printStackTrace(new java.io.PrintWriter(w));
        return w.toString();
    }

    // ------------------------------------------------------------------ complete, variables

    private static void complete(Map<String, Object> req) {
        Object codeObj = req.get("code");
        String code = codeObj instanceof String ? (String) codeObj : "";
        int points = code.codePointCount(0, code.length());
        Object cursorObj = req.get("cursor");
        int cursorPoints = cursorObj instanceof Number ? ((Number) cursorObj).intValue() : points;
        if (cursorPoints < 0 || cursorPoints > points)
            cursorPoints = points;
        int cursor = code.offsetByCodePoints(0, cursorPoints);
        int[] anchor = {cursor};
        List<SourceCodeAnalysis.Suggestion> suggestions = analysis.completionSuggestions(code, cursor, anchor);
        boolean anyMatchesType = suggestions.stream().anyMatch(SourceCodeAnalysis.Suggestion::matchesType);
        LinkedHashSet<String> matches = new LinkedHashSet<>();
        for (SourceCodeAnalysis.Suggestion s : suggestions) {
            if (!anyMatchesType || s.matchesType())
                matches.add(s.continuation());
        }
        int start = Math.max(0, Math.min(anchor[0], cursor));
        Map<String, Object> reply = event("complete_reply", req.get("id"));
        reply.put("matches", new ArrayList<>(matches));
        reply.put("cursor_start", code.codePointCount(0, start));
        reply.put("cursor_end", cursorPoints);
        emit(reply, false);
    }

    private static void variables(Map<String, Object> req) {
        Object limitObj = req.get("max_repr");
        int limit = limitObj instanceof Number && ((Number) limitObj).intValue() > 0
                ? ((Number) limitObj).intValue() : 200;
        List<Object> out = new ArrayList<>();
        shell.variables().forEach(v -> {
            if (v.name().startsWith("$"))
                return; // expression temporaries, like Python's _ names
            String repr;
            try {
                repr = shell.status(v) == Snippet.Status.VALID ? shell.varValue(v) : "<not initialized>";
            } catch (RuntimeException e) {
                repr = "<toString failed: " + e.getClass().getSimpleName() + ">";
            }
            if (repr == null)
                repr = "null";
            if (repr.length() > limit)
                repr = repr.substring(0, Math.max(limit - 1, 0)) + "\u2026";
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("name", v.name());
            item.put("type", v.typeName());
            item.put("repr", repr);
            out.add(item);
        });
        Map<String, Object> reply = event("variables_reply", req.get("id"));
        reply.put("variables", out);
        emit(reply, false);
    }

    // ------------------------------------------------------------------ control

    private static void shutdown(Object id) {
        if (id != null)
            emit(event("shutdown_reply", id), false);
        flushStd();
        System.exit(0);
    }

    private static void init(Map<String, Object> req) {
        Object nonce = req.get("mark_nonce");
        if (!(nonce instanceof String) || !NONCE.matcher((String) nonce).matches())
            fatal("init carries no valid mark_nonce");
        markPrefix = ("\u001b]5253;rh;" + nonce + ";").getBytes(StandardCharsets.US_ASCII);
        Object options = req.get("options");
        boolean warmUpAsked = false;
        if (options instanceof Map) {
            Object classpath = ((Map<?, ?>) options).get("classpath");
            if (classpath instanceof List) {
                for (Object entry : (List<?>) classpath) {
                    if (entry instanceof String && !((String) entry).isEmpty())
                        shell.addToClasspath((String) entry);
                }
            }
            warmUpAsked = Boolean.TRUE.equals(((Map<?, ?>) options).get("warm_up"));
        }
        // Asked for by the handler for a worker started ahead of demand (a pooled one).
        if (warmUpAsked)
            warmUp(new WarmUp(WARM_UP_SNIPPETS, WARM_UP_CPU_BUDGET_MS, WARM_UP_WALL_BUDGET_MS));
        Map<String, Object> hello = event("hello", req.get("id"));
        hello.put("protocol", PROTOCOL);
        hello.put("language", "java");
        hello.put("language_version", System.getProperty("java.version"));
        hello.put("implementation", System.getProperty("java.vm.name"));
        hello.put("executable", System.getProperty("java.home") + "/bin/java");
        hello.put("pid", ProcessHandle.current().pid());
        Map<String, Object> capabilities = new LinkedHashMap<>();
        capabilities.put("interrupt", List.of("signal", "inband"));
        capabilities.put("complete", true);
        capabilities.put("variables", true);
        capabilities.put("display", DISPLAY_MIMES);
        hello.put("capabilities", capabilities);
        emit(hello, false);
        if (!Native.loaded())
            log("warning", "native library not loaded (" + Native.loadError() + "): env layers reach "
                    + "System.getenv() but not child processes, and the working directory cannot change");
    }

    // Runs `warmUp`, then the context's own shell runs one snippet too (its compiler state is
    // its own), and a full collection leaves an empty young generation, so the next runs do not
    // stop for the warm-up's garbage. The system property "replhost.warm_up" tells what was done.
    private static void warmUp(WarmUp warmUp) {
        try {
            String summary = warmUp.run();
            for (SnippetEvent e : shell.eval("int $replhostWarmUp = 1;"))
                shell.drop(e.snippet());
            System.gc();
            System.setProperty("replhost.warm_up", summary);
            log("debug", "javac warmed up: " + summary);
        } catch (Throwable e) {
            // Out of memory: the warm-up is only an optimisation.
            log("debug", "warm-up not completed: " + e);
        }
    }

    private static void dispatch(Map<String, Object> req) {
        String type = (String) req.get("type");
        try {
            switch (type) {
            case "execute":
                execute(req);
                break;
            case "complete":
                complete(req);
                break;
            case "variables":
                variables(req);
                break;
            case "shutdown":
                shutdown(req.get("id"));
                break;
            case "init": {
                Map<String, Object> reply = event("error_reply", req.get("id"));
                reply.put("reason", "already initialized");
                emit(reply, false);
                break;
            }
            default: {
                Map<String, Object> reply = event("error_reply", req.get("id"));
                reply.put("reason", "unknown request type");
                emit(reply, false);
            }
            }
        } catch (Throwable e) {
            log("error", "driver failure handling " + type + ": " + stackTrace(e));
            if (!type.equals("execute")) {
                Map<String, Object> reply = event("error_reply", req.get("id"));
                reply.put("reason", e.getClass().getSimpleName() + ": " + e.getMessage());
                emit(reply, false);
            }
        }
    }

    // ------------------------------------------------------------------ start-up

    private static void openChannels() throws IOException {
        if (Native.loaded()) {
            for (int fd = 3; fd <= 4; fd++) {
                int rc = Native.cloexec0(fd);
                if (rc != 0)
                    throw new IOException("fd " + fd + " is not open (" + Native.errnoText(rc) + ")");
            }
            requests = new BufferedInputStream(new FileInputStream(Native.descriptor0(3)), 1 << 16);
            events = new FileOutputStream(Native.descriptor0(4));
            markFd1 = Native.dupCloexec0(1);
            markFd2 = Native.dupCloexec0(2);
            if (markFd1 < 0 || markFd2 < 0)
                throw new IOException("cannot duplicate fds 1 and 2 for sync marks");
        } else {
            // The JDK cannot adopt an inherited descriptor number, but it can open the pipe again.
            requests = new BufferedInputStream(new FileInputStream("/proc/self/fd/3"), 1 << 16);
            events = new FileOutputStream("/proc/self/fd/4");
            markOut1 = new FileOutputStream(FileDescriptor.out);
            markOut2 = new FileOutputStream(FileDescriptor.err);
        }
    }

    private static void setupStdio() {
        // Unbuffered, so a print reaches fd 1 before the output of a child process started after
        // it, and nothing waits in a buffer when the mark is written.
        stdout = new PrintStream(unclosable(FileDescriptor.out), true, StandardCharsets.UTF_8);
        stderr = new PrintStream(unclosable(FileDescriptor.err), true, StandardCharsets.UTF_8);
        System.setOut(stdout);
        System.setErr(stderr);
    }

    // System.out.close() in a cell must not close fd 1 (the JDK would point it at /dev/null):
    // child processes and later cells still write there.
    private static OutputStream unclosable(FileDescriptor fd) {
        return new FileOutputStream(fd) {
            @Override
            public void close() {
            }
        };
    }

    private static void startShell() {
        shell = JShell.builder()
                .executionEngine(new Control.Provider(), null)
                .out(stdout)
                .err(stderr)
                .build();
        analysis = shell.sourceCodeAnalysis();
        // Warm-up: the first evaluation loads and JIT-compiles javac (most of a second); done
        // here so the user's first run is as fast as the others. Creates no $N temporaries, so
        // the user's first expression is $1.
        for (String helper : HELPERS) {
            for (SnippetEvent e : shell.eval(helper)) {
                helperIds.add(e.snippet().id());
                if (e.status() != Snippet.Status.VALID)
                    log("warning", "helper snippet not defined (" + e.status() + "): " + helper);
            }
        }
        for (SnippetEvent e : shell.eval("int $replhostWarmUp = 1;"))
            shell.drop(e.snippet());
        analysis.analyzeCompletion("int x = 1;");
    }

    public static void main(String[] args) {
        Native.load(System.getProperty("replhost.native"));
        try {
            openChannels();
        } catch (IOException e) {
            System.err.println("replhost java driver: " + e.getMessage());
            System.exit(2);
        }
        setupStdio();
        installSignalHandler();
        Thread reader = new Thread(Driver::readRequests, "replhost-requests");
        reader.setDaemon(true);
        reader.start();
        startShell();
        Object first;
        try {
            first = queue.take();
        } catch (InterruptedException e) {
            return;
        }
        if (first == EOF)
            shutdown(null);
        @SuppressWarnings("unchecked")
        Map<String, Object> init = (Map<String, Object>) first;
        if (!"init".equals(init.get("type")))
            fatal("first request must be init, got " + init.get("type"));
        init(init);
        while (true) {
            Object next;
            try {
                next = queue.take();
            } catch (InterruptedException e) {
                continue;
            }
            if (next == EOF)
                shutdown(null);
            @SuppressWarnings("unchecked")
            Map<String, Object> req = (Map<String, Object>) next;
            dispatch(req);
        }
    }
}
