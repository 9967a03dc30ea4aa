// SPDX-License-Identifier: Apache-2.0
// The code editor on its own (no engine): run units and their bands, as each language writes
// its cell markers; indentation by levels and comments as each language writes them.
#include "gui/cells.h"
#include "gui/codeeditor.h"
#include "gui/syntaxscheme.h"
#include "gui/themes.h"

#include <Qsci/qscilexer.h>

#include <QApplication>
#include <QTest>

#include <cmath>

using namespace replhost::gui;

Q_DECLARE_METATYPE(QList<int>)

class tst_CodeEditor : public QObject {
    Q_OBJECT
private slots:
    void cellsAreFoundInEachLanguage_data();
    void cellsAreFoundInEachLanguage();
    void cellsAreDrawnAsBands();
    void codeToRunIsTheCellUnderTheCursor();
    void plainTextHasNoCells();
    void indentationFollowsTheLanguage_data();
    void indentationFollowsTheLanguage();
    void backspaceRemovesOneIndentLevel();
    void pythonDedentsAfterFlowStatements_data();
    void pythonDedentsAfterFlowStatements();
    void toggleCommentUsesTheLanguagesComment();
    void everyStyleIsReadableInEachTheme_data();
    void everyStyleIsReadableInEachTheme();
    void rIsHighlighted_data();
    void rIsHighlighted();
};

namespace {

// WCAG 2's relative luminance and contrast ratio.
double luminance(const QColor &colour)
{
    const auto channel = [](double c) { return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF());
}

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

// Each row: the lexer hint, the text, and the first line of each cell found.
void tst_CodeEditor::cellsAreFoundInEachLanguage_data()
{
    QTest::addColumn<QString>("lexer");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QList<int>>("firsts");

    QTest::newRow("python #%%") << "python" << "import os\n#%%\nx = 1\n#%% second\ny = 2" << QList<int>{0, 1, 3};
    QTest::newRow("python # %% from the start") << "python" << "# %%\nx = 1\n# %%\ny = 2" << QList<int>{0, 2};
    QTest::newRow("python # In[ ] (Jupyter's export)")
            << "python" << "# In[ ]:\nx = 1\n\n\n# In[12]:\ny = 2" << QList<int>{0, 4};
    QTest::newRow("python indented marker") << "python" << "x = 1\n    # %%\ny = 2" << QList<int>{0, 1};
    QTest::newRow("python: // is not a comment") << "python" << "x = 1\n// %%\ny = 2" << QList<int>{0};
    QTest::newRow("python: # In[x] is not a marker") << "python" << "x = 1\n# In[x]\ny = 2" << QList<int>{0};
    QTest::newRow("python: a comment that mentions %% later") << "python" << "# see %%\nx = 1" << QList<int>{0};
    QTest::newRow("bash") << "bash" << "#!/bin/bash\n# %%\necho a\n# %% two\necho b" << QList<int>{0, 1, 3};
    QTest::newRow("perl") << "perl" << "#%%\nprint 1;\n#%%\nprint 2;" << QList<int>{0, 2};
    QTest::newRow("javascript // %%") << "javascript" << "// %%\nlet a = 1\n//%%\na" << QList<int>{0, 2};
    QTest::newRow("javascript // In[ ]") << "javascript" << "let a = 1\n// In[ ]\na" << QList<int>{0, 1};
    QTest::newRow("javascript: # is not a comment") << "javascript" << "let a = 1\n# %%\na" << QList<int>{0};
    QTest::newRow("java") << "java" << "// %% setup\nint a = 1;\n// %% use\nSystem.out.println(a);" << QList<int>{0, 2};
    QTest::newRow("go") << "go" << "x := 1\n// %%\nfmt.Println(x)" << QList<int>{0, 1};
    QTest::newRow("no markers: one cell") << "python" << "x = 1\ny = 2" << QList<int>{0};
}

void tst_CodeEditor::cellsAreFoundInEachLanguage()
{
    QFETCH(QString, lexer);
    QFETCH(QString, text);
    QFETCH(QList<int>, firsts);
    const QStringList lines = text.split(QLatin1Char('\n'));
    const QList<Cells::Cell> cells = Cells::split(lines, Cells::commentPrefix(lexer));
    QList<int> found;
    for (const Cells::Cell &cell : cells)
        found.append(cell.first);
    QCOMPARE(found, firsts);
    // The cells cover the text, in order, without gaps.
    QCOMPARE(cells.first().first, 0);
    QCOMPARE(cells.last().last, int(lines.size()) - 1);
    for (qsizetype i = 1; i < cells.size(); ++i)
        QCOMPARE(cells.at(i).first, cells.at(i - 1).last + 1);
}

void tst_CodeEditor::cellsAreDrawnAsBands()
{
    CodeEditor editor;
    editor.setLexerHint(QStringLiteral("python"));
    editor.setText(QStringLiteral("import os\n# %%\nx = 1\n# %% plot\ny = 2\n"));
    QCOMPARE(editor.cellBandLines(), (QList<int>{1, 3}));
    // The bands follow edits.
    editor.setCursorPosition(4, 0);
    editor.insert(QStringLiteral("# In[ ]:\n"));
    QCOMPARE(editor.cellBandLines(), (QList<int>{1, 3, 4}));
    // And the language: under the JavaScript lexer a "#" line is not a marker.
    editor.setLexerHint(QStringLiteral("javascript"));
    QVERIFY(editor.cellBandLines().isEmpty());
}

void tst_CodeEditor::codeToRunIsTheCellUnderTheCursor()
{
    CodeEditor editor;
    editor.setLexerHint(QStringLiteral("python"));
    editor.setText(QStringLiteral("a = 1\n# %% second\nb = 2\nc = 3\n# %%\nd = 4"));
    editor.setCursorPosition(0, 0);
    QCOMPARE(editor.codeToRun(), QStringLiteral("a = 1"));
    editor.setCursorPosition(3, 2);
    QCOMPARE(editor.codeToRun(), QStringLiteral("# %% second\nb = 2\nc = 3"));
    QCOMPARE(editor.lineToRun(), QStringLiteral("c = 3"));
    editor.moveToNextCell();
    int line = 0, index = 0;
    editor.getCursorPosition(&line, &index);
    QCOMPARE(line, 5);
    QCOMPARE(editor.codeToRun(), QStringLiteral("# %%\nd = 4"));
    // The selection wins over the cell.
    editor.setSelection(2, 0, 2, 5);
    QCOMPARE(editor.codeToRun(), QStringLiteral("b = 2"));
    QCOMPARE(editor.lineToRun(), QStringLiteral("b = 2"));
}

void tst_CodeEditor::plainTextHasNoCells()
{
    CodeEditor editor;
    editor.setText(QStringLiteral("# %%\nnot code\n# %%\n"));
    QVERIFY(editor.cellBandLines().isEmpty());
    QCOMPARE(editor.codeToRun(), QStringLiteral("# %%\nnot code\n# %%"));
}

void tst_CodeEditor::indentationFollowsTheLanguage_data()
{
    QTest::addColumn<QString>("lexer");
    QTest::addColumn<int>("width");
    QTest::addColumn<bool>("tabs");
    QTest::newRow("python") << "python" << 4 << false;
    QTest::newRow("javascript") << "javascript" << 2 << false;
    QTest::newRow("java") << "java" << 4 << false;
    QTest::newRow("go") << "go" << 4 << true;
    QTest::newRow("bash") << "bash" << 4 << false;
    QTest::newRow("perl") << "perl" << 4 << false;
}

void tst_CodeEditor::indentationFollowsTheLanguage()
{
    QFETCH(QString, lexer);
    QFETCH(int, width);
    QFETCH(bool, tabs);
    CodeEditor editor;
    editor.setLexerHint(lexer);
    QCOMPARE(editor.indentationWidth(), width);
    QCOMPARE(editor.indentationsUseTabs(), tabs);
    QVERIFY(editor.backspaceUnindents());
}

// Backspace in an indentation removes a level, not a space (else an IndentationError follows).
void tst_CodeEditor::backspaceRemovesOneIndentLevel()
{
    CodeEditor editor;
    editor.setLexerHint(QStringLiteral("python"));
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    editor.setFocus();
    QTest::keyClicks(&editor, QStringLiteral("for i in range(3):"));
    QTest::keyClick(&editor, Qt::Key_Return);
    QCOMPARE(editor.indentation(1), 4);
    QTest::keyClicks(&editor, QStringLiteral("if i:"));
    QTest::keyClick(&editor, Qt::Key_Return);
    QCOMPARE(editor.indentation(2), 8);
    QTest::keyClick(&editor, Qt::Key_Backspace);
    QCOMPARE(editor.indentation(2), 4);
    QTest::keyClick(&editor, Qt::Key_Backspace);
    QCOMPARE(editor.indentation(2), 0);
    QCOMPARE(editor.text(), QStringLiteral("for i in range(3):\n    if i:\n"));
}

void tst_CodeEditor::pythonDedentsAfterFlowStatements_data()
{
    QTest::addColumn<QString>("statement");
    QTest::newRow("return") << "return total";
    QTest::newRow("pass") << "pass";
    QTest::newRow("break") << "break";
    QTest::newRow("continue") << "continue";
    QTest::newRow("raise") << "raise ValueError('no')";
}

void tst_CodeEditor::pythonDedentsAfterFlowStatements()
{
    QFETCH(QString, statement);
    CodeEditor editor;
    editor.setLexerHint(QStringLiteral("python"));
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    editor.setFocus();
    QTest::keyClicks(&editor, QStringLiteral("while True:"));
    QTest::keyClick(&editor, Qt::Key_Return);
    QTest::keyClicks(&editor, QStringLiteral("if done:"));
    QTest::keyClick(&editor, Qt::Key_Return);
    QTest::keyClicks(&editor, statement);
    QTest::keyClick(&editor, Qt::Key_Return);
    QCOMPARE(editor.indentation(3), 4);
    int line = 0, index = 0;
    editor.getCursorPosition(&line, &index);
    QCOMPARE(line, 3);
    QCOMPARE(index, 4);
    // Other statements keep their level; and the dedent is Python's only.
    QTest::keyClicks(&editor, QStringLiteral("returned = 1"));
    QTest::keyClick(&editor, Qt::Key_Return);
    QCOMPARE(editor.indentation(4), 4);
    CodeEditor js;
    js.setLexerHint(QStringLiteral("javascript"));
    js.show();
    QVERIFY(QTest::qWaitForWindowExposed(&js));
    js.setText(QStringLiteral("  return 1"));
    js.setCursorPosition(0, 10);
    QTest::keyClick(&js, Qt::Key_Return);
    QCOMPARE(js.indentation(1), 2);
}

// Ctrl+/ comments the lines with the language's line comment and uncomments them again, each
// as one undo step.
void tst_CodeEditor::toggleCommentUsesTheLanguagesComment()
{
    CodeEditor editor;
    editor.setLexerHint(QStringLiteral("python"));
    editor.setText(QStringLiteral("def f():\n    a = 1\n\n    return a\n"));
    editor.setSelection(1, 0, 3, 12);
    editor.toggleComment();
    QCOMPARE(editor.text(), QStringLiteral("def f():\n    # a = 1\n\n    # return a\n"));
    editor.toggleComment();
    QCOMPARE(editor.text(), QStringLiteral("def f():\n    a = 1\n\n    return a\n"));
    editor.undo();
    QCOMPARE(editor.text(), QStringLiteral("def f():\n    # a = 1\n\n    # return a\n"));

    editor.setLexerHint(QStringLiteral("javascript"));
    editor.setText(QStringLiteral("let a = 1\nlet b = 2"));
    editor.setCursorPosition(1, 3);
    editor.toggleComment();
    QCOMPARE(editor.text(), QStringLiteral("let a = 1\n// let b = 2"));
}

// Each language's lexer in each theme: every style the lexer describes has a colour chosen by the
// workbench (none left on QScintilla's defaults, such as Bash's yellow $(...) on white) and reads
// at 4.5:1 or more on the editor's paper.
void tst_CodeEditor::everyStyleIsReadableInEachTheme_data()
{
    QTest::addColumn<QString>("theme");
    QTest::addColumn<QString>("lexer");
    for (const char *theme : {"light", "dark"}) {
        for (const char *lexer : {"python", "bash", "perl", "javascript", "java", "go", "r"})
            QTest::addRow("%s %s", theme, lexer) << QString::fromLatin1(theme) << QString::fromLatin1(lexer);
    }
}

void tst_CodeEditor::everyStyleIsReadableInEachTheme()
{
    QFETCH(QString, theme);
    QFETCH(QString, lexer);
    Themes::apply(theme);
    CodeEditor editor;
    editor.setLexerHint(lexer);
    QsciLexer *lex = editor.lexer();
    QVERIFY(lex);
    const QColor paper = QApplication::palette().color(QPalette::Base);
    QCOMPARE(editor.paper(), paper);
    int described = 0;
    for (int style = 0; style < 128; ++style) {
        const QString name = lex->description(style);
        if (name.isEmpty())
            continue;
        ++described;
        QVERIFY2(SyntaxScheme::role(*lex, style).has_value(), qPrintable(QStringLiteral("no colour chosen for %1 (%2)").arg(name).arg(style)));
        QCOMPARE(lex->paper(style), paper);
        const double ratio = contrast(lex->color(style), paper);
        QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1 (%2): %3 on %4 is %5:1")
                                                  .arg(name).arg(style)
                                                  .arg(lex->color(style).name(), paper.name())
                                                  .arg(ratio, 0, 'f', 2)));
    }
    QVERIFY(described >= 6);  // RLexer, the smallest, has six styles
}

// Each row: R code, a piece of it, and the role the piece is shown in (every byte of it).
void tst_CodeEditor::rIsHighlighted_data()
{
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("piece");
    QTest::addColumn<int>("role");
    using Role = SyntaxScheme::Role;
    QTest::newRow("comment") << "x <- 1  # the answer, \"almost\"" << "# the answer, \"almost\"" << int(Role::Comment);
    QTest::newRow("reserved word") << "f <- function(x) x" << "function" << int(Role::Keyword);
    QTest::newRow("constant") << "y <- NA_integer_" << "NA_integer_" << int(Role::Keyword);
    QTest::newRow("a name that starts like one") << "iffy <- 1" << "iffy" << int(Role::Text);
    QTest::newRow("double quotes with an escape") << "s <- \"a \\\" b\"; t" << "\"a \\\" b\"" << int(Role::String);
    QTest::newRow("single quotes") << "c('x', 'y')" << "'y'" << int(Role::String);
    QTest::newRow("a string over lines") << "s <- 'one\ntwo # not a comment'\nz" << "two # not a comment'"
                                         << int(Role::String);
    QTest::newRow("after a string over lines") << "s <- 'one\ntwo'\nz # note" << "# note" << int(Role::Comment);
    QTest::newRow("backquoted name") << "`my var` <- 'if'" << "`my var`" << int(Role::Text);
    QTest::newRow("integer") << "n <- 42L" << "42L" << int(Role::Number);
    QTest::newRow("exponent") << "e <- 1.5e-3" << "1.5e-3" << int(Role::Number);
    QTest::newRow("hexadecimal") << "h <- 0xFF" << "0xFF" << int(Role::Number);
    QTest::newRow("leading point") << "p <- .5" << ".5" << int(Role::Number);
    QTest::newRow("a name with digits") << "x1 <- 2" << "x1" << int(Role::Text);
    QTest::newRow("function call") << "print(mean(x))" << "mean" << int(Role::Function);
}

void tst_CodeEditor::rIsHighlighted()
{
    QFETCH(QString, code);
    QFETCH(QString, piece);
    QFETCH(int, role);
    CodeEditor editor;
    editor.setLexerHint(QStringLiteral("r"));
    QVERIFY(editor.lexer());
    editor.setText(code);
    editor.SendScintilla(QsciScintilla::SCI_COLOURISE, 0, -1);
    const QByteArray bytes = code.toUtf8();
    const qsizetype at = bytes.indexOf(piece.toUtf8());
    QVERIFY(at >= 0);
    for (qsizetype i = at; i < at + piece.toUtf8().size(); ++i) {
        const int style = int(editor.SendScintilla(QsciScintilla::SCI_GETSTYLEAT, static_cast<unsigned long>(i)));
        const std::optional<SyntaxScheme::Role> shown = SyntaxScheme::role(*editor.lexer(), style);
        QVERIFY2(shown && int(*shown) == role,
                 qPrintable(QStringLiteral("byte %1 ('%2') has style %3").arg(i).arg(QChar(bytes.at(i))).arg(style)));
    }
}

QTEST_MAIN(tst_CodeEditor)

#include "tst_codeeditor.moc"
