// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "cells.h"

#include <Qsci/qsciscintilla.h>

#include <QKeySequence>
#include <QList>
#include <QStringList>

namespace replhost::gui {

// The code editor: QScintilla with the lexer a language plugin asks for (its "lexer" metadata:
// python, bash, javascript, perl, java, cpp — Go uses the C++ lexer), line numbers, auto-indent
// and brace matching, coloured from the active palette. Running and interrupting are the
// window's actions; the editor only says what to run.
//
// Indentation goes by levels of the language's width (tabs for Go); Backspace in leading blanks
// removes a level; in Python the line after a ':' starts a level deeper and the line after
// return, pass, break, continue or raise a level lower.
//
// Each editor is one document of the workbench's tabs: a file (filePath() set) or the untitled
// buffer of a context (no path), bound to the context its code runs in (empty: the selected
// one). Each keeps its own undo stack, selection and scroll position.
//
// Ownership: a QWidget in its parent's tree. GUI thread only.
class CodeEditor : public QsciScintilla {
    Q_OBJECT
public:
    explicit CodeEditor(QWidget *parent = nullptr);

    // Picks the lexer for a plugin's lexer hint; an unknown or empty hint gives plain text.
    void setLexerHint(const QString &hint);
    QString lexerHint() const { return m_hint; }

    void setEditorFont(const QFont &font);
    // Re-derives every colour from the current palette (after a theme change).
    void applyPalette();

    // The selection if there is one, else the cell under the cursor (the whole text when it
    // has no cell markers; see Cells).
    QString codeToRun() const;
    // The selection if there is one, else the cursor's line.
    QString lineToRun() const;
    QList<Cells::Cell> cells() const;
    Cells::Cell currentCell() const;
    // Puts the cursor on the first line after the current cell (the end when it is the last).
    void moveToNextCell();
    // Puts the cursor at the start of the next line (the end of the text on the last one).
    void moveToNextLine();
    // Comments the selected lines (or the cursor's) with the language's line comment, or
    // uncomments them when they all are comments; one undo step. Plain text has no comment.
    void toggleComment();

    // The lines drawn as a cell's band (its marker line), for tests and screenshots.
    QList<int> cellBandLines() const;

    // Replaces the whole text as one undoable step (Ctrl+Z brings the old text back), unlike
    // setText(), which also empties the undo stack.
    void replaceTextUndoable(const QString &text);

    // Takes these keys away from Scintilla's key map, so they reach the window's actions when
    // the editor has focus (Scintilla binds, for instance, Shift+Return and Ctrl+/).
    void releaseKeys(const QList<QKeySequence> &keys);

    // The file this editor shows; empty for a context's untitled buffer.
    QString filePath() const { return m_filePath; }
    void setFilePath(const QString &path) { m_filePath = path; }
    // The context its code runs in; empty: none yet (the selected context runs it).
    QString workspace() const { return m_workspace; }
    QString contextId() const { return m_contextId; }
    void bind(const QString &workspace, const QString &contextId);

    // The text before the cursor and the cursor as a character offset into text(), the shape of
    // a completion request.
    int cursorCharacterOffset() const;
    // Shows `matches` as a completion list; choosing one replaces the `replaceLength` characters
    // before the cursor.
    void showCompletions(const QStringList &matches, int replaceLength);

protected:
    bool event(QEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void updateMarginWidth();
    void updateCellMarks();
    void updateCurrentCellMark();
    void applyCellColours();
    void applyIndentation();
    void indentPythonLine(int line);

    QString m_hint;
    QString m_filePath, m_workspace, m_contextId;
    QFont m_font;
    int m_replaceLength = 0;
    int m_currentCellFirst = -1, m_currentCellLast = -1;
};

} // namespace replhost::gui
