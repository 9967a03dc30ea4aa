// SPDX-License-Identifier: Apache-2.0
package replhost.driver;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;

import jdk.jshell.JShell;
import jdk.jshell.SnippetEvent;

/**
 * Warms javac up by evaluating representative snippets in throwaway JShell instances.
 *
 * <p>Why: JShell compiles every snippet with javac, twice (an analysis and the real compile), and
 * most of that work is javac's and JShell's own bookkeeping, the same for any snippet. Until
 * those paths have run a few hundred times the JVM interprets them, and a trivial snippet costs
 * 8–10 ms of CPU; after about 300 snippets of warm-up it costs 2–4 ms. Full tiered compilation
 * (C2) does not do better than C1 here and costs far more CPU to get there, so workers keep
 * {@code -XX:TieredStopAtLevel=1}.
 *
 * <p>The snippets run in JShell instances of their own, closed afterwards, so nothing they
 * declare or import is ever visible to the context's shell, and that shell's snippet history and
 * symbol table stay as small as a fresh context's. They print nothing and touch no files.
 *
 * <p>Bounded by a number of snippets, by the CPU time they take, by wall time and by the heap
 * left. Runs on the evaluating thread, before the worker says hello (so never during an
 * execution: snippets run through {@link Control}, whose pending method is one per JVM).
 */
final class WarmUp {
    // Covers what javac does for a typical cell: declarations of every kind, expressions,
    // statements, lambdas and streams, generics, imports, a compile error and an exception.
    private static final String[] SNIPPETS = {
        "int a = 1;",
        "a + 2",
        "String s = \"v\" + a;",
        "s.length()",
        "a = a * 3;",
        "long total = 0L;",
        "double d = Math.sqrt(2.0) * a;",
        "var label = String.format(\"%d-%s\", a, s);",
        "int square(int n) { return n * n; }",
        "square(7)",
        "import java.util.*;",
        "List<Integer> items = new ArrayList<>(List.of(3, 1, 2));",
        "Collections.sort(items);",
        "items.stream().map(i -> i * 2).filter(i -> i > 2).toList()",
        "Map<String, Integer> counts = new HashMap<>();",
        "counts.merge(s, 1, Integer::sum);",
        "for (int i = 0; i < 3; i++) { total += i; }",
        "if (total > 1) { total--; } else { total++; }",
        "class Point { final int x; Point(int x) { this.x = x; } int twice() { return 2 * x; } }",
        "new Point(4).twice()",
        "record Pair(String left, int right) {}",
        "new Pair(\"p\", 2)",
        "interface Shape { double area(); }",
        "enum Color { RED, GREEN }",
        "String name = switch (Color.RED) { case RED -> \"r\"; default -> \"g\"; };",
        "int[] numbers = {1, 2, 3};",
        "Arrays.stream(numbers).sum()",
        "StringBuilder text = new StringBuilder(); text.append(label).append('!');",
        "try { Integer.parseInt(\"x\"); } catch (NumberFormatException e) { a = -1; }",
        "Integer.parseInt(\"not a number\")",
        "undefinedName + 1",
        "<T extends Comparable<T>> T larger(T p, T q) { return p.compareTo(q) >= 0 ? p : q; }",
        "larger(\"a\", \"b\")",
    };

    /** Snippets evaluated in one throwaway shell before a fresh one replaces it. */
    private static final int PER_SHELL = 40;
    /** Free heap a step needs: a throwaway shell's compiler state is tens of MB at its peak. */
    private static final long MIN_HEADROOM = 48L << 20;

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final int limit;
    private final long cpuBudgetNs;
    private final long deadline;
    private long cpuNs;
    private JShell shell;
    private int done;
    private boolean finished;
    private final long startedAt = System.nanoTime();
    private long endedAt;

    /**
     * A warm-up of at most {@code limit} snippets that also stops once its snippets took
     * {@code cpuBudgetMs} of this thread's CPU time, or {@code wallBudgetMs} after it was created;
     * a budget {@code <= 0} is no limit.
     */
    WarmUp(int limit, long cpuBudgetMs, long wallBudgetMs) {
        this.limit = limit;
        this.cpuBudgetNs = cpuBudgetMs > 0 ? TimeUnit.MILLISECONDS.toNanos(cpuBudgetMs) : 0;
        this.deadline = wallBudgetMs > 0 ? startedAt + TimeUnit.MILLISECONDS.toNanos(wallBudgetMs) : 0;
    }

    /** Runs the warm-up; returns what it did: "N snippets, C ms of CPU in W ms". */
    String run() {
        while (step()) {
            // Each step bounds itself.
        }
        return summary();
    }

    // Evaluates the next snippet; false once the warm-up is over (then it holds no shell).
    private boolean step() {
        if (finished)
            return false;
        if (done >= limit || (cpuBudgetNs != 0 && cpuNs >= cpuBudgetNs)
                || (deadline != 0 && System.nanoTime() - deadline > 0)) {
            finish();
            return false;
        }
        if (headroom() < MIN_HEADROOM) {
            // Mostly garbage, usually.
            System.gc();
        }
        if (headroom() < MIN_HEADROOM) {
            // A small -Xmx from the jvm_options setting: the warm-up must not fill the heap.
            Driver.log("debug", "warm-up stopped after " + done + " snippets: the heap is too full");
            finish();
            return false;
        }
        long cpuAtStart = THREADS.getCurrentThreadCpuTime();
        try {
            if (shell == null)
                shell = JShell.builder().executionEngine(new Control.Provider(), null).build();
            String source = SNIPPETS[done % SNIPPETS.length];
            shell.sourceCodeAnalysis().analyzeCompletion(source);
            // Like a context's run: expression temporaries and statements are dropped.
            for (SnippetEvent e : shell.eval(source)) {
                if (Driver.isTemporary(e))
                    shell.drop(e.snippet());
            }
            done++;
            if (done % PER_SHELL == 0)
                closeShell();
            cpuNs += THREADS.getCurrentThreadCpuTime() - cpuAtStart;
            return true;
        } catch (Throwable e) {
            // Out of memory, or JShell refusing: a warm-up is only ever an optimisation.
            Driver.log("debug", "warm-up stopped after " + done + " snippets: " + e);
            finish();
            return false;
        }
    }

    // "N snippets, C ms of CPU in W ms": how many ran, the CPU time they took on this thread, and
    // the wall time from the start to the end of the warm-up.
    private String summary() {
        return done + " snippets, " + TimeUnit.NANOSECONDS.toMillis(cpuNs) + " ms of CPU in "
                + TimeUnit.NANOSECONDS.toMillis(endedAt - startedAt) + " ms";
    }

    // What the heap could still grow to hold; garbage counts as used.
    private static long headroom() {
        Runtime runtime = Runtime.getRuntime();
        return runtime.maxMemory() - (runtime.totalMemory() - runtime.freeMemory());
    }

    private void finish() {
        closeShell();
        finished = true;
        endedAt = System.nanoTime();
    }

    private void closeShell() {
        if (shell == null)
            return;
        try {
            shell.close();
        } catch (RuntimeException e) {
            // Its classes go with it either way.
        }
        shell = null;
    }
}
