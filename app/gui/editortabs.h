// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QFont>
#include <QJsonArray>
#include <QKeySequence>
#include <QList>
#include <QTabWidget>
#include <QTimer>

class QSettings;

namespace replhost::gui {

class CodeEditor;

// The editor's tabs: files and the untitled buffers of contexts, one CodeEditor each (so each
// keeps its undo stack and scroll position). A file tab shows its name with " *" while it has
// unsaved changes; a buffer tab is named after its context and needs no saving: its text is kept
// in the settings (under "buffers/"), written shortly after each change and by saveState()
// (the window calls it when it closes and goes), so what was typed is there after a relaunch. There is always at least one tab: closing
// the last one leaves an empty untitled buffer bound to no context.
//
// The tabs know nothing of the engine: the window says which context a tab runs in (bind),
// what a context is called and which lexer a language uses.
//
// Ownership: a QWidget in its parent's tree; `settings` must outlive it. GUI thread only.
class EditorTabs : public QTabWidget {
    Q_OBJECT
public:
    EditorTabs(QSettings &settings, QWidget *parent = nullptr);

    CodeEditor *currentEditor() const;
    CodeEditor *editorAt(int index) const;
    QList<CodeEditor *> editors() const;

    // The open tab of `path` (compared as a canonical path), or null.
    CodeEditor *fileEditor(const QString &path) const;
    // The tab of the context's untitled buffer, or null when it is not open.
    CodeEditor *bufferEditor(const QString &workspace, const QString &contextId) const;

    // A new tab for a file's text, made current.
    CodeEditor *openFileTab(const QString &path, const QString &text, const QString &lexerHint);
    // Opens (or finds) the context's untitled buffer tab with its kept text, made current.
    CodeEditor *openBufferTab(const QString &workspace, const QString &contextId, const QString &title,
                              const QString &lexerHint);
    // Makes `editor` run in a context. An unbound untitled buffer becomes that context's buffer.
    void bind(CodeEditor *editor, const QString &workspace, const QString &contextId,
              const QString &title = QString());
    // A context's display name changed: its buffer tab's title follows.
    void renameContext(const QString &contextId, const QString &title);
    // A context was deleted: its buffer tab closes and its kept text goes; files bound to it are
    // unbound (they stay open).
    void removeContext(const QString &workspace, const QString &contextId);

    // Writes the file of `editor` (to `path` when given: Save As); false with `error` set when
    // it cannot be written. The tab's modified marker clears.
    bool save(CodeEditor *editor, const QString &path, QString *error);
    // Closes a tab; a file with unsaved changes asks first (Save, Discard, Cancel). False when
    // the tab stays (cancelled, or the save failed).
    bool closeTab(int index);
    // Asks about every file with unsaved changes; false when one of them must stay.
    bool confirmCloseAll();

    // The open tabs as a list the settings keep ({file, workspace, context} per tab), and the
    // current one; restore() is the window's, since it reads the files and checks the contexts.
    QJsonArray session() const;
    // Writes every buffer's text and the session to the settings now.
    void saveState();

    void setEditorFont(const QFont &font);
    // Word wrap and visible whitespace, for every editor, open or opened later.
    void setViewOptions(bool wordWrap, bool showWhitespace);
    // Keys every editor leaves to the window's actions (see CodeEditor::releaseKeys).
    void setWindowKeys(const QList<QKeySequence> &keys);
    static QString bufferKey(const QString &workspace, const QString &contextId);

signals:
    void currentEditorChanged(CodeEditor *editor);

private:
    CodeEditor *newEditor();
    void updateTitle(CodeEditor *editor);
    void scheduleBufferSave();
    void ensureOneTab();
    // A file with unsaved changes asks Save, Discard or Cancel; false: it must stay open.
    bool askToSave(CodeEditor *editor, const QString &title);
    CodeEditor *emptyPlaceholder() const;
    void dropPlaceholder(CodeEditor *placeholder);

    QSettings &m_settings;
    QFont m_font;
    QList<QKeySequence> m_windowKeys;
    bool m_wordWrap = false;
    bool m_showWhitespace = false;
    QTimer m_bufferSave;
};

} // namespace replhost::gui
