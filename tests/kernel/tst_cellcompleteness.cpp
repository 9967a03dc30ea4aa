// SPDX-License-Identifier: Apache-2.0
// What replhost-kernel answers a console that asks whether a cell is complete (Jupyter's
// is_complete_request): run it, read another line (and how to indent it), or refuse it.

#include "cellcompleteness.h"

#include <QTest>

using replhost::kernel::CellCompleteness;
Q_DECLARE_METATYPE(CellCompleteness::Status)

class tst_CellCompleteness : public QObject {
    Q_OBJECT

private slots:
    void statusOfCell_data();
    void statusOfCell();
    void indentOfNextLine_data();
    void indentOfNextLine();
};

void tst_CellCompleteness::statusOfCell_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<CellCompleteness::Status>("status");
    constexpr auto complete = CellCompleteness::Status::Complete;
    constexpr auto incomplete = CellCompleteness::Status::Incomplete;
    constexpr auto invalid = CellCompleteness::Status::Invalid;

    QTest::newRow("python statement") << "python" << "x = 1" << complete;
    QTest::newRow("python call") << "python" << "print('hello, world')" << complete;
    QTest::newRow("python open call") << "python" << "print(1," << incomplete;
    QTest::newRow("python open triple string") << "python" << "s = '''hello" << incomplete;
    QTest::newRow("python block header") << "python" << "def f():" << incomplete;
    QTest::newRow("python block header with comment") << "python" << "for i in x:  # each" << incomplete;
    QTest::newRow("python block without its empty line") << "python" << "for i in x:\n    print(i)" << incomplete;
    QTest::newRow("python block with its empty line") << "python" << "for i in x:\n    print(i)\n" << complete;
    QTest::newRow("python colon in a string") << "python" << "s = 'a:'" << complete;
    QTest::newRow("python colon in a slice") << "python" << "a[1:]" << complete;
    QTest::newRow("python backslash") << "python" << "x = 1 + \\" << incomplete;
    QTest::newRow("python stray bracket") << "python" << "x = )" << invalid;
    QTest::newRow("python mismatched bracket") << "python" << "f(]" << invalid;
    QTest::newRow("python string broken by a newline") << "python" << "s = 'abc\ndef'" << invalid;
    QTest::newRow("python bracket in a comment") << "python" << "x = 1  # (" << complete;
    QTest::newRow("javascript statement") << "javascript" << "let x = 1" << complete;
    QTest::newRow("javascript open function") << "javascript" << "function f() {" << incomplete;
    QTest::newRow("javascript open template") << "javascript" << "`hello" << incomplete;
    QTest::newRow("javascript template over lines") << "javascript" << "`a\nb`" << complete;
    QTest::newRow("javascript open block comment") << "javascript" << "/* note" << incomplete;
    QTest::newRow("javascript brace in a string") << "javascript" << "let s = '{'" << complete;
    QTest::newRow("javascript stray brace") << "javascript" << "}" << invalid;
    QTest::newRow("typescript typed statement") << "typescript" << "let x: number = 1" << complete;
    QTest::newRow("typescript open interface") << "typescript" << "interface P {" << incomplete;
    QTest::newRow("typescript open template") << "typescript" << "`hello" << incomplete;
    QTest::newRow("typescript stray brace") << "typescript" << "}" << invalid;
    QTest::newRow("java statement") << "java" << "int x = 1;" << complete;
    QTest::newRow("java open class") << "java" << "class A {" << incomplete;
    QTest::newRow("java open text block") << "java" << "String s = \"\"\"\nhello" << incomplete;
    QTest::newRow("go statement") << "go" << "x := 1" << complete;
    QTest::newRow("go open func") << "go" << "func f() {" << incomplete;
    QTest::newRow("go raw string over lines") << "go" << "s := `a\nb`" << complete;
    QTest::newRow("perl statement") << "perl" << "my $x = 1;" << complete;
    QTest::newRow("perl open sub") << "perl" << "sub f {" << incomplete;
    QTest::newRow("perl array length is no comment") << "perl" << "my $n = $#a; {" << incomplete;
    QTest::newRow("perl string over lines") << "perl" << "print \"a\nb\"" << complete;
    QTest::newRow("bash command") << "bash" << "echo hello" << complete;
    QTest::newRow("bash open if") << "bash" << "if true; then" << incomplete;
    QTest::newRow("bash closed if") << "bash" << "if true; then echo y; fi" << complete;
    QTest::newRow("bash open loop") << "bash" << "for i in 1 2; do" << incomplete;
    QTest::newRow("bash closed loop") << "bash" << "while false; do :; done" << complete;
    QTest::newRow("bash case with patterns") << "bash" << "case $x in\n  a) echo a;;\nesac" << complete;
    QTest::newRow("bash open case") << "bash" << "case $x in" << incomplete;
    QTest::newRow("bash keyword as an argument") << "bash" << "echo if do case" << complete;
    QTest::newRow("bash open quote") << "bash" << "echo 'hello" << incomplete;
    QTest::newRow("bash pipe at the end") << "bash" << "ls |" << incomplete;
    QTest::newRow("bash and at the end") << "bash" << "true &&" << incomplete;
    QTest::newRow("bash backslash") << "bash" << "echo a \\" << incomplete;
    QTest::newRow("bash length is no comment") << "bash" << "echo ${#x}" << complete;
    QTest::newRow("bash comment") << "bash" << "echo a # if" << complete;
}

void tst_CellCompleteness::statusOfCell()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(CellCompleteness::Status, status);
    const CellCompleteness::Verdict verdict = CellCompleteness::judge(language.toStdString(), code.toStdString());
    QCOMPARE(QLatin1String(CellCompleteness::name(verdict.status)), QLatin1String(CellCompleteness::name(status)));
}

void tst_CellCompleteness::indentOfNextLine_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("indent");

    QTest::newRow("python block header") << "python" << "def f():" << "    ";
    QTest::newRow("python nested header") << "python" << "def f():\n    if x:" << "        ";
    QTest::newRow("python inside a block") << "python" << "def f():\n    x = 1" << "    ";
    QTest::newRow("python open bracket") << "python" << "x = [" << "    ";
    QTest::newRow("bash open if") << "bash" << "if true; then" << "  ";
}

void tst_CellCompleteness::indentOfNextLine()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, indent);
    const CellCompleteness::Verdict verdict = CellCompleteness::judge(language.toStdString(), code.toStdString());
    QCOMPARE(QLatin1String(CellCompleteness::name(verdict.status)), QLatin1String("incomplete"));
    QCOMPARE(QString::fromStdString(verdict.indent), indent);
}

QTEST_GUILESS_MAIN(tst_CellCompleteness)
#include "tst_cellcompleteness.moc"
