// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Qsci/qsciscintilla.h>

#include <QStringList>

namespace replhost::gui {

// The code editor: QScintilla with the lexer a language plugin asks for (its "lexer" metadata:
// python, bash, javascript, perl, java, cpp — Go uses the C++ lexer), line numbers, auto-indent
// and brace matching, coloured from the active palette. Running and interrupting are the
// window's actions; the editor only says what to run.
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

    // The selection if there is one, else the whole text.
    QString codeToRun() const;

    // The text before the cursor and the cursor as a character offset into text(), the shape of
    // a completion request.
    int cursorCharacterOffset() const;
    // Shows `matches` as a completion list; choosing one replaces the `replaceLength` characters
    // before the cursor.
    void showCompletions(const QStringList &matches, int replaceLength);

protected:
    bool event(QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void updateMarginWidth();

    QString m_hint;
    QFont m_font;
    int m_replaceLength = 0;
};

} // namespace replhost::gui
