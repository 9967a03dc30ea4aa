// SPDX-License-Identifier: Apache-2.0
package replhost.driver;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;

import jdk.jshell.execution.LocalExecutionControl;
import jdk.jshell.spi.ExecutionControl;
import jdk.jshell.spi.ExecutionControlProvider;
import jdk.jshell.spi.ExecutionEnv;

/**
 * JShell's local execution engine (snippets run in this JVM, so their System.out is fd 1 and
 * their child processes inherit fds 1 and 2), plus one thing JShell does not give: the value an
 * expression produced as an object, not only as its display string, so images can be shown as
 * images.
 *
 * <p>JShell runs a snippet by invoking its wrapper's {@code do_it$} method through
 * {@link #invoke(Method)} on a thread it can stop. The override hands JShell a trampoline
 * instead, which runs the real method on that same thread and keeps its return value. Everything
 * else (threads, stop, exception translation, the display string) stays JShell's own. Frames of
 * the trampoline never reach users: JShell cuts stack traces at the snippet's wrapper.
 */
public final class Control extends LocalExecutionControl {
    private static final Method TRAMPOLINE;

    static {
        Method m;
        try {
            m = Control.class.getMethod("trampoline");
        } catch (NoSuchMethodException e) {
            m = null;
        }
        TRAMPOLINE = m;
    }

    // Set on the evaluating thread before JShell starts its snippet thread (Thread.start orders
    // the accesses); volatile for the value read back after JShell joined that thread.
    private static volatile Method pending;
    private static volatile Object value;
    private static volatile boolean hasValue;

    static final class Provider implements ExecutionControlProvider {
        @Override
        public String name() {
            return "replhost-local";
        }

        @Override
        public ExecutionControl generate(ExecutionEnv env, Map<String, String> parameters) {
            return new Control();
        }
    }

    @Override
    protected String invoke(Method doitMethod) throws Exception {
        if (TRAMPOLINE == null)
            return super.invoke(doitMethod);
        pending = doitMethod;
        value = null;
        hasValue = false;
        try {
            return super.invoke(TRAMPOLINE);
        } finally {
            pending = null;
        }
    }

    /** Runs the pending snippet; public only so JShell's reflection can call it. */
    public static Object trampoline() throws Throwable {
        Method m = pending;
        try {
            Object result = m.invoke(null);
            value = result;
            hasValue = true;
            return result;
        } catch (InvocationTargetException e) {
            // JShell expects the snippet's own exception as the cause of the invocation's.
            throw e.getCause();
        }
    }

    /** The object the last snippet returned; null when it returned none or failed. */
    static Object takeValue() {
        Object v = hasValue ? value : null;
        value = null;
        hasValue = false;
        return v;
    }

    /** JShell's display string for a value ({@code "text"}, {@code int[2] { 1, 2 }}, ...). */
    static String display(Object v) {
        return valueString(v);
    }
}
