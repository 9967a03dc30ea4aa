// SPDX-License-Identifier: Apache-2.0
#include "codeeditor.h"

#include "rlexer.h"
#include "syntaxscheme.h"
#include "themes.h"

#include <Qsci/qscicommand.h>
#include <Qsci/qscicommandset.h>
#include <Qsci/qscilexerbash.h>
#include <Qsci/qscilexercpp.h>
#include <Qsci/qscilexerjava.h>
#include <Qsci/qscilexerjavascript.h>
#include <Qsci/qscilexerperl.h>
#include <Qsci/qscilexerpython.h>

#include <QApplication>
#include <QEvent>
#include <QKeyEvent>
#include <QRegularExpression>

namespace replhost::gui {

namespace {

constexpr int kCompletionListId = 1;

// Scintilla markers of the cells: a band on each marker line, a line under the cell before it,
// and a bar in the symbol margin along the current cell.
constexpr int kCellBandMarker = 8;
constexpr int kCellSeparatorMarker = 9;
constexpr int kCurrentCellMarker = 10;
constexpr int kCellMargin = 1;
// Past this many lines the cells are still run, but not drawn as the text changes.
constexpr int kMaxDrawnLines = 100'000;

QsciLexer *createLexer(const QString &hint, QObject *parent)
{
    if (hint == QLatin1String("python")) {
        auto *lexer = new QsciLexerPython(parent);
        // Python's indentation is significant: flag inconsistent tabs and spaces.
        lexer->setIndentationWarning(QsciLexerPython::Inconsistent);
        return lexer;
    }
    if (hint == QLatin1String("bash") || hint == QLatin1String("sh"))
        return new QsciLexerBash(parent);
    if (hint == QLatin1String("javascript") || hint == QLatin1String("js"))
        return new QsciLexerJavaScript(parent);
    if (hint == QLatin1String("perl"))
        return new QsciLexerPerl(parent);
    if (hint == QLatin1String("java"))
        return new QsciLexerJava(parent);
    if (hint == QLatin1String("cpp") || hint == QLatin1String("c") || hint == QLatin1String("go"))
        return new QsciLexerCPP(parent);
    if (hint == QLatin1String("r"))
        return new RLexer(parent);
    return nullptr;
}

} // namespace

CodeEditor::CodeEditor(QWidget *parent)
    : QsciScintilla(parent)
{
    setUtf8(true);
    setAutoIndent(true);
    setBackspaceUnindents(true);
    setTabIndents(true);
    applyIndentation();
    setBraceMatching(QsciScintilla::SloppyBraceMatch);
    setCaretLineVisible(true);
    setMarginType(0, QsciScintilla::NumberMargin);
    setMarginLineNumbers(0, true);
    setMarginType(kCellMargin, QsciScintilla::SymbolMargin);
    setMarginWidth(kCellMargin, 4);
    setMarginMarkerMask(kCellMargin, 1 << kCurrentCellMarker);
    setMarginMarkerMask(0, 0);
    markerDefine(QsciScintilla::Background, kCellBandMarker);
    markerDefine(QsciScintilla::Underline, kCellSeparatorMarker);
    markerDefine(QsciScintilla::FullRectangle, kCurrentCellMarker);
    setFolding(QsciScintilla::NoFoldStyle);
    setEolMode(QsciScintilla::EolUnix);
    setWrapMode(QsciScintilla::WrapNone);
    setAutoCompletionSource(QsciScintilla::AcsNone);
    // Scintilla's default scroll width is a fixed 2000 px, which shows a horizontal scroll bar
    // for short code; grow it with the longest line seen instead.
    SendScintilla(SCI_SETSCROLLWIDTH, 1);
    SendScintilla(SCI_SETSCROLLWIDTHTRACKING, true);

    connect(this, &QsciScintilla::linesChanged, this, &CodeEditor::updateMarginWidth);
    connect(this, &QsciScintilla::textChanged, this, &CodeEditor::updateCellMarks);
    connect(this, &QsciScintilla::cursorPositionChanged, this, &CodeEditor::updateCurrentCellMark);
    connect(this, &QsciScintilla::userListActivated, this, [this](int id, const QString &chosen) {
        if (id != kCompletionListId)
            return;
        int line = 0, index = 0;
        getCursorPosition(&line, &index);
        // Select the typed prefix (characters, not bytes: positionRelative counts characters).
        const long end = SendScintilla(SCI_GETCURRENTPOS);
        const long start = SendScintilla(SCI_POSITIONRELATIVE, end, -long(m_replaceLength));
        SendScintilla(SCI_SETSEL, start, end);
        replaceSelectedText(chosen);
    });
    setEditorFont(font());
    applyPalette();
}

void CodeEditor::setLexerHint(const QString &hint)
{
    if (hint == m_hint && (lexer() != nullptr) == !hint.isEmpty())
        return;
    QsciLexer *old = lexer();
    m_hint = hint;
    setLexer(createLexer(hint, this));
    delete old;
    setEditorFont(m_font);
    applyPalette();
    applyIndentation();
    updateCellMarks();
}

void CodeEditor::setEditorFont(const QFont &font)
{
    m_font = font;
    setFont(font);
    if (QsciLexer *lex = lexer()) {
        lex->setDefaultFont(font);
        lex->setFont(font, -1);
    }
    setMarginsFont(font);
    updateMarginWidth();
}

void CodeEditor::applyPalette()
{
    const QPalette pal = QApplication::palette();
    const QColor base = pal.color(QPalette::Base);
    const QColor text = pal.color(QPalette::Text);
    if (QsciLexer *lex = lexer())
        SyntaxScheme::apply(*lex, pal);
    setPaper(base);
    setColor(text);
    setCaretForegroundColor(text);
    setCaretLineBackgroundColor(Themes::isDark(pal) ? base.lighter(135) : base.darker(106));
    setMarginsBackgroundColor(pal.color(QPalette::Window));
    setMarginsForegroundColor(Themes::mutedColour(pal));
    setSelectionBackgroundColor(pal.color(QPalette::Highlight));
    setSelectionForegroundColor(pal.color(QPalette::HighlightedText));
    setMatchedBraceBackgroundColor(Themes::isDark(pal) ? QColor(0x3a, 0x5a, 0x40) : QColor(0xc8, 0xf0, 0xc8));
    setMatchedBraceForegroundColor(text);
    setUnmatchedBraceForegroundColor(Themes::errorColour(pal));
    setUnmatchedBraceBackgroundColor(base);
    setIndentationGuidesBackgroundColor(base);
    setIndentationGuidesForegroundColor(Themes::mutedColour(pal));
    applyCellColours();
}

void CodeEditor::applyCellColours()
{
    const QPalette pal = QApplication::palette();
    const QColor base = pal.color(QPalette::Base);
    const QColor highlight = pal.color(QPalette::Highlight);
    // A band faint enough that the marker line's text keeps its contrast.
    const auto mix = [](const QColor &a, const QColor &b, double t) {
        return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
                                float(a.blueF() * (1 - t) + b.blueF() * t));
    };
    setMarkerBackgroundColor(mix(base, highlight, Themes::isDark(pal) ? 0.28 : 0.14), kCellBandMarker);
    setMarkerBackgroundColor(mix(base, highlight, 0.55), kCellSeparatorMarker);
    setMarkerForegroundColor(highlight, kCurrentCellMarker);
    setMarkerBackgroundColor(highlight, kCurrentCellMarker);
}

void CodeEditor::applyIndentation()
{
    // The width each language's style guide uses; Go's is a tab (gofmt).
    const bool tabs = m_hint == QLatin1String("go");
    const int width = m_hint == QLatin1String("javascript") || m_hint == QLatin1String("js") ? 2 : 4;
    setIndentationsUseTabs(tabs);
    setIndentationWidth(width);
    setTabWidth(width);
}

void CodeEditor::keyPressEvent(QKeyEvent *event)
{
    const bool newline = (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter)
                         && (event->modifiers() & ~Qt::KeypadModifier) == Qt::NoModifier && !isListActive();
    QsciScintilla::keyPressEvent(event);
    if (newline && m_hint == QLatin1String("python")) {
        int line = 0, index = 0;
        getCursorPosition(&line, &index);
        indentPythonLine(line);
    }
}

void CodeEditor::indentPythonLine(int line)
{
    if (line < 1 || !text(line).trimmed().isEmpty())
        return;
    // Auto-indent gave the new line the indentation of the one above; a block opens a level
    // deeper (after ':'), a flow statement closes one (after return, pass, break, continue or
    // raise).
    static const QRegularExpression opens(QStringLiteral(":\\s*(#.*)?$"));
    static const QRegularExpression flow(QStringLiteral("^\\s*(return|pass|break|continue|raise)\\b"));
    const QString above = text(line - 1);
    const int indent = indentation(line - 1);
    if (indentation(line) != indent)
        return;
    int level = indent;
    if (opens.match(above).hasMatch())
        level = indent + indentationWidth();
    else if (flow.match(above).hasMatch())
        level = qMax(0, indent - indentationWidth());
    if (level == indentation(line))
        return;
    setIndentation(line, level);
    setCursorPosition(line, level);
}

void CodeEditor::toggleComment()
{
    const QString prefix = Cells::commentPrefix(m_hint);
    if (prefix.isEmpty())
        return;
    int first = 0, index = 0, last = 0, endIndex = 0;
    if (hasSelectedText()) {
        getSelection(&first, &index, &last, &endIndex);
        if (endIndex == 0 && last > first)
            --last;  // a selection that ends at a line's start leaves that line alone
    } else {
        getCursorPosition(&first, &index);
        last = first;
    }
    bool allComments = true;
    int column = -1;
    for (int line = first; line <= last; ++line) {
        const QString lineText = text(line);
        if (lineText.trimmed().isEmpty())
            continue;
        if (!lineText.trimmed().startsWith(prefix))
            allComments = false;
        const int indent = indentation(line);
        column = column < 0 ? indent : qMin(column, indent);
    }
    if (column < 0)
        return;
    beginUndoAction();
    for (int line = first; line <= last; ++line) {
        const QString lineText = text(line);
        if (lineText.trimmed().isEmpty())
            continue;
        if (allComments) {
            const qsizetype at = lineText.indexOf(prefix);
            qsizetype length = prefix.size();
            if (lineText.mid(at + length, 1) == QLatin1String(" "))
                ++length;
            setSelection(line, int(at), line, int(at + length));
            removeSelectedText();
        } else {
            // The comment goes at the block's indentation, so the lines keep their shape.
            int position = 0, col = 0;
            for (const QChar c : lineText) {
                if (col >= column || (c != QLatin1Char(' ') && c != QLatin1Char('\t')))
                    break;
                col = c == QLatin1Char('\t') ? (col / tabWidth() + 1) * tabWidth() : col + 1;
                ++position;
            }
            insertAt(prefix + QLatin1Char(' '), line, position);
        }
    }
    endUndoAction();
    if (first != last)
        setSelection(first, 0, last, int(text(last).size()) - (text(last).endsWith(QLatin1Char('\n')) ? 1 : 0));
}

bool CodeEditor::event(QEvent *event)
{
    // Scintilla claims Esc as a shortcut override (to cancel its lists). Without a list open,
    // let it through to the window's Interrupt action.
    if (event->type() == QEvent::ShortcutOverride) {
        auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_Escape && key->modifiers() == Qt::NoModifier && !isListActive()
            && !isCallTipActive()) {
            event->ignore();
            return false;
        }
    }
    return QsciScintilla::event(event);
}

void CodeEditor::changeEvent(QEvent *event)
{
    QsciScintilla::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        applyPalette();
}

QString CodeEditor::codeToRun() const
{
    if (hasSelectedText())
        return selectedText();
    const Cells::Cell cell = currentCell();
    QStringList lines;
    for (int line = cell.first; line <= cell.last; ++line)
        lines.append(text(line));
    QString code = lines.join(QString());
    // text(line) keeps each line's end; the cell's own last one is not code.
    while (code.endsWith(QLatin1Char('\n')) || code.endsWith(QLatin1Char('\r')))
        code.chop(1);
    return code;
}

QString CodeEditor::lineToRun() const
{
    if (hasSelectedText())
        return selectedText();
    int line = 0, index = 0;
    getCursorPosition(&line, &index);
    QString code = text(line);
    while (code.endsWith(QLatin1Char('\n')) || code.endsWith(QLatin1Char('\r')))
        code.chop(1);
    return code;
}

QList<Cells::Cell> CodeEditor::cells() const
{
    return Cells::split(text().split(QLatin1Char('\n')), Cells::commentPrefix(m_hint));
}

Cells::Cell CodeEditor::currentCell() const
{
    int line = 0, index = 0;
    getCursorPosition(&line, &index);
    return Cells::at(cells(), line);
}

void CodeEditor::moveToNextCell()
{
    const Cells::Cell cell = currentCell();
    const int lastLine = lines() - 1;
    if (cell.last >= lastLine) {
        setCursorPosition(lastLine, text(lastLine).size());
        return;
    }
    // Into the next cell's body, past its marker line when it has a body.
    const Cells::Cell next = Cells::at(cells(), cell.last + 1);
    const int line = next.hasMarker && next.last > next.first ? next.first + 1 : next.first;
    setCursorPosition(line, 0);
    ensureLineVisible(line);
}

void CodeEditor::moveToNextLine()
{
    int line = 0, index = 0;
    getCursorPosition(&line, &index);
    if (line + 1 < lines())
        setCursorPosition(line + 1, 0);
    else
        setCursorPosition(line, text(line).size());
    ensureCursorVisible();
}

QList<int> CodeEditor::cellBandLines() const
{
    QList<int> result;
    auto *self = const_cast<CodeEditor *>(this);
    for (int line = self->markerFindNext(0, 1 << kCellBandMarker); line >= 0;
         line = self->markerFindNext(line + 1, 1 << kCellBandMarker))
        result.append(line);
    return result;
}

void CodeEditor::updateCellMarks()
{
    markerDeleteAll(kCellBandMarker);
    markerDeleteAll(kCellSeparatorMarker);
    if (lines() <= kMaxDrawnLines) {
        for (const Cells::Cell &cell : cells()) {
            if (!cell.hasMarker)
                continue;
            markerAdd(cell.first, kCellBandMarker);
            if (cell.first > 0)
                markerAdd(cell.first - 1, kCellSeparatorMarker);
        }
    }
    m_currentCellFirst = m_currentCellLast = -1;
    updateCurrentCellMark();
}

void CodeEditor::updateCurrentCellMark()
{
    if (lines() > kMaxDrawnLines)
        return;
    const QList<Cells::Cell> all = cells();
    // Only a text with cells has a current one worth marking.
    const Cells::Cell cell = all.size() > 1 ? currentCell() : Cells::Cell{-1, -1, false};
    if (cell.first == m_currentCellFirst && cell.last == m_currentCellLast)
        return;
    markerDeleteAll(kCurrentCellMarker);
    m_currentCellFirst = cell.first;
    m_currentCellLast = cell.last;
    for (int line = cell.first; line >= 0 && line <= cell.last; ++line)
        markerAdd(line, kCurrentCellMarker);
}

void CodeEditor::replaceTextUndoable(const QString &replacement)
{
    beginUndoAction();
    selectAll();
    if (hasSelectedText())
        replaceSelectedText(replacement);
    else
        insert(replacement);
    endUndoAction();
    setCursorPosition(0, 0);
}

void CodeEditor::releaseKeys(const QList<QKeySequence> &keys)
{
    QsciCommandSet *commands = standardCommands();
    for (const QKeySequence &sequence : keys) {
        if (sequence.count() != 1)
            continue;
        const int key = sequence[0].toCombined();
        // Scintilla's map knows Return, not the keypad's Enter; both are released.
        const int modifiers = key & int(Qt::KeyboardModifierMask);
        const QList<int> forms = (key & ~int(Qt::KeyboardModifierMask)) == int(Qt::Key_Enter)
                                         ? QList<int>{key, modifiers | int(Qt::Key_Return)}
                                         : QList<int>{key};
        for (const int form : forms) {
            if (QsciCommand *command = commands->boundTo(form)) {
                if (command->key() == form)
                    command->setKey(0);
                else
                    command->setAlternateKey(0);
            }
        }
    }
}

void CodeEditor::bind(const QString &workspace, const QString &contextId)
{
    m_workspace = workspace;
    m_contextId = contextId;
}

int CodeEditor::cursorCharacterOffset() const
{
    const long pos = const_cast<CodeEditor *>(this)->SendScintilla(SCI_GETCURRENTPOS);
    return int(const_cast<CodeEditor *>(this)->SendScintilla(SCI_COUNTCHARACTERS, 0L, pos));
}

void CodeEditor::showCompletions(const QStringList &matches, int replaceLength)
{
    if (matches.isEmpty())
        return;
    m_replaceLength = qMax(0, replaceLength);
    showUserList(kCompletionListId, matches);
}

void CodeEditor::updateMarginWidth()
{
    const QString digits = QString(qMax(3, int(QString::number(lines()).size())) + 1, QLatin1Char('9'));
    setMarginWidth(0, digits);
}

} // namespace replhost::gui
