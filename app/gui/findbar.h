// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QPointer>
#include <QWidget>

class QLabel;
class QLineEdit;
class QToolButton;

namespace replhost::gui {

class CodeEditor;

// The find and replace bar under the editor (Ctrl+F, Ctrl+H): searches the current tab as
// the text is typed, F3 / Shift+F3 (or Enter / Shift+Enter in the field) go to the next and
// previous match, wrapping at the ends; Replace replaces the match shown and goes on, Replace
// All replaces every match as one undoable step. Esc closes it and gives the editor the focus.
//
// Ownership: a QWidget in its parent's tree; the editor is only watched (it can go with its
// tab). GUI thread only.
class FindBar : public QWidget {
    Q_OBJECT
public:
    explicit FindBar(QWidget *parent = nullptr);

    // The editor searched (the current tab's).
    void setEditor(CodeEditor *editor);

    // Shows the bar with the editor's selection (a single line of it) as the text to find.
    void showFind();
    // The same with the replace field.
    void showReplace();
    void closeBar();

    bool findNext();
    bool findPrevious();
    // Replaces the match that is selected (if it is one) and selects the next.
    bool replaceOne();
    // Every match from the start, as one undo step. Returns how many.
    int replaceAll();

    QLineEdit *findField() const { return m_find; }
    QLineEdit *replaceField() const { return m_replace; }
    QString statusText() const;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void open(bool withReplace);
    bool find(bool forward, bool fromSelectionStart);
    bool selectionIsMatch() const;

    QPointer<CodeEditor> m_editor;
    QLineEdit *m_find;
    QLineEdit *m_replace;
    QToolButton *m_case;
    QToolButton *m_word;
    QToolButton *m_regex;
    QToolButton *m_replaceOne;
    QToolButton *m_replaceAll;
    QLabel *m_replaceLabel;
    QLabel *m_status;
};

} // namespace replhost::gui
