# SPDX-License-Identifier: Apache-2.0
"""Jupyter's own conformance suite (jupyter_kernel_test, Debian's python3-jupyter-kernel-test)
against replhost-kernel, for the language named on the command line.

Prints {"ran", "failures": [...], "skipped": {test: reason}} as JSON on stdout, the unittest report
on stderr. What a language cannot answer is declared in CANNOT below, with the reason: those tests
are skipped by jupyter_kernel_test (their samples are left empty), and the caller checks that
exactly the declared ones were skipped.
"""
import json
import sys
import unittest

import jupyter_kernel_test

# Samples that every language answers, per language.
SAMPLES = {
    "python": dict(
        code_hello_world="greeting = 'hello, world'\nprint(greeting)",
        code_stderr="import sys\nprint('oops', file=sys.stderr)",
        code_generate_error="raise ValueError('oops')",
        code_execute_result=[{"code": "6 * 7", "result": "42"}],
        code_display_data=[{"code": "display({'text/html': '<b>x</b>'}, raw=True)", "mime": "text/html"}],
        completion_samples=[{"text": "zi", "matches": ["zip"]}],
        complete_code_samples=["1", "print('hello, world')", "def f(x):\n  return x * 2\n"],
        incomplete_code_samples=["print('''hello", "def f(x):", "for i in x:\n    y = i"],
        invalid_code_samples=["x = )", "f(]"],
    ),
    "javascript": dict(
        code_hello_world="var greeting = 'hello, world'; console.log(greeting)",
        code_stderr="console.error('oops')",
        code_generate_error="throw new Error('oops')",
        code_execute_result=[{"code": "6 * 7", "result": "42"}],
        code_display_data=[{"code": "display('text/html', '<b>x</b>')", "mime": "text/html"}],
        completion_samples=[{"text": "Math.PI"}],
        complete_code_samples=["1", "let x = 1", "function f() { return 1 }"],
        incomplete_code_samples=["function f() {", "`hello"],
        invalid_code_samples=["}", "f(]"],
    ),
    "typescript": dict(
        code_hello_world="var greeting: string = 'hello, world'; console.log(greeting)",
        code_stderr="console.error('oops' as string)",
        code_generate_error="throw new Error('oops')",
        code_execute_result=[{"code": "6 * 7", "result": "42"},
                             {"code": "const six: number = 6\nsix * 7", "result": "42"}],
        code_display_data=[{"code": "display('text/html', '<b>x</b>')", "mime": "text/html"}],
        completion_samples=[{"text": "Math.PI"}],
        complete_code_samples=["1", "let x: number = 1", "function f(): number { return 1 }"],
        incomplete_code_samples=["function f(): void {", "`hello"],
        invalid_code_samples=["}", "f(]"],
    ),
    "perl": dict(
        code_hello_world="our $greeting = 'hello, world'; print \"$greeting\\n\"",
        code_stderr="print STDERR \"oops\\n\"",
        code_generate_error="die \"oops\\n\"",
        code_execute_result=[{"code": "6 * 7", "result": "42"}],
        code_display_data=[{"code": "display('text/html' => '<b>x</b>')", "mime": "text/html"}],
        completion_samples=[{"text": "pri"}],
        complete_code_samples=["1", "my $x = 1;"],
        incomplete_code_samples=["sub f {", "print \"hello"],
        invalid_code_samples=["}"],
    ),
    "java": dict(
        code_hello_world="String greeting = \"hello, world\";\nSystem.out.println(greeting);",
        code_stderr="System.err.println(\"oops\");",
        code_generate_error="throw new RuntimeException(\"oops\");",
        code_execute_result=[{"code": "6 * 7", "result": "42"}],
        code_display_data=[{"code": "display(\"text/html\", \"<b>x</b>\");", "mime": "text/html"}],
        completion_samples=[{"text": "Math.ab"}],
        complete_code_samples=["1", "int x = 1;"],
        incomplete_code_samples=["class A {", "String s = \"\"\"\nhello"],
        invalid_code_samples=["}"],
    ),
    "go": dict(
        code_hello_world="greeting := \"hello, world\"\nfmt.Println(greeting)",
        code_stderr="fmt.Fprintln(os.Stderr, \"oops\")",
        code_generate_error="panic(\"oops\")",
        code_execute_result=[{"code": "6 * 7", "result": "42"}],
        code_display_data=[{"code": "display(\"text/html\", \"<b>x</b>\")", "mime": "text/html"}],
        completion_samples=[{"text": "fmt.Pri"}],
        complete_code_samples=["1", "x := 1"],
        incomplete_code_samples=["func f() {", "s := `a"],
        invalid_code_samples=["}"],
    ),
    "bash": dict(
        code_hello_world="greeting='hello, world'; echo \"$greeting\"",
        code_stderr="echo oops >&2",
        code_generate_error="false",
        code_display_data=[{"code": "echo '<b>x</b>' | display text/html", "mime": "text/html"}],
        completion_samples=[{"text": "ech"}],
        complete_code_samples=["echo 1", "if true; then echo y; fi"],
        incomplete_code_samples=["if true; then", "echo 'hello"],
        invalid_code_samples=[],
    ),
}

# What a language cannot answer: the jupyter_kernel_test test, and why.
CANNOT = {
    lang: {
        "test_pager": "replhost runs have no pager payloads",
        "test_clear_output": "replhost's events have no clear_output",
    }
    for lang in SAMPLES
}
CANNOT["bash"]["test_execute_result"] = "a Bash cell has no value, so no execute_result"
CANNOT["bash"]["test_history"] = ("jupyter_kernel_test's history test replays code_execute_result, which "
                                  "Bash has not; tst_jupyterkernel checks history")


def make_case(language):
    samples = dict(SAMPLES[language])
    # Inspect knows the context's variables: the hello-world cell defined one.
    name = "$greeting" if language == "perl" else "greeting"
    if language != "bash":
        samples["code_inspect_sample"] = name
        samples["code_history_pattern"] = "6 * 7"
        samples["supported_history_operations"] = ("tail", "range", "search")
    else:
        samples["code_inspect_sample"] = "greeting"

    attributes = dict(samples, kernel_name="replhost-" + language, language_name=language,
                      file_extension={"python": ".py", "javascript": ".js", "typescript": ".ts", "perl": ".pl", "java": ".java",
                                      "go": ".go", "bash": ".sh"}[language])
    return type("Conformance_" + language, (jupyter_kernel_test.KernelTests,), attributes)


def main():
    language = sys.argv[1]
    case = make_case(language)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(suite)

    def name(test):
        return test.id().rsplit(".", 1)[-1].split(" ")[0]

    report = {
        "ran": result.testsRun,
        "failures": [name(t) + ": " + trace for t, trace in result.failures + result.errors],
        "skipped": {name(t): CANNOT[language].get(name(t), "not declared: " + reason)
                    for t, reason in result.skipped},
        "declared": CANNOT[language],
    }
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
