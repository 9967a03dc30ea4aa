// SPDX-License-Identifier: Apache-2.0
#include "editortabs.h"

#include "codeeditor.h"

#include <QFileInfo>
#include <QJsonObject>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QTabBar>

namespace replhost::gui {

namespace {

// A buffer's text is written this long after the last keystroke (and always when the window
// goes), so typing does not rewrite the settings file at every key.
constexpr int kBufferSaveDelayMs = 1000;

const char *const kUnboundKey = "buffers/unbound";

QString canonical(const QString &path)
{
    const QFileInfo info(path);
    const QString resolved = info.canonicalFilePath();
    return resolved.isEmpty() ? info.absoluteFilePath() : resolved;
}

} // namespace

EditorTabs::EditorTabs(QSettings &settings, QWidget *parent)
    : QTabWidget(parent)
    , m_settings(settings)
{
    setObjectName(QStringLiteral("editorTabs"));
    setDocumentMode(true);
    setTabsClosable(true);
    setMovable(true);
    tabBar()->setExpanding(false);
    tabBar()->setElideMode(Qt::ElideMiddle);
    m_bufferSave.setSingleShot(true);
    m_bufferSave.setInterval(kBufferSaveDelayMs);
    connect(&m_bufferSave, &QTimer::timeout, this, &EditorTabs::saveState);
    connect(this, &QTabWidget::tabCloseRequested, this, [this](int index) { closeTab(index); });
    connect(this, &QTabWidget::currentChanged, this, [this] { emit currentEditorChanged(currentEditor()); });
    ensureOneTab();
}


CodeEditor *EditorTabs::currentEditor() const
{
    return qobject_cast<CodeEditor *>(currentWidget());
}

CodeEditor *EditorTabs::editorAt(int index) const
{
    return qobject_cast<CodeEditor *>(widget(index));
}

QList<CodeEditor *> EditorTabs::editors() const
{
    QList<CodeEditor *> result;
    for (int i = 0; i < count(); ++i)
        result.append(editorAt(i));
    return result;
}

CodeEditor *EditorTabs::fileEditor(const QString &path) const
{
    const QString wanted = canonical(path);
    for (CodeEditor *editor : editors()) {
        if (!editor->filePath().isEmpty() && canonical(editor->filePath()) == wanted)
            return editor;
    }
    return nullptr;
}

CodeEditor *EditorTabs::bufferEditor(const QString &workspace, const QString &contextId) const
{
    for (CodeEditor *editor : editors()) {
        if (editor->filePath().isEmpty() && editor->contextId() == contextId && editor->workspace() == workspace)
            return editor;
    }
    return nullptr;
}

CodeEditor *EditorTabs::newEditor()
{
    auto *editor = new CodeEditor(this);
    editor->setEditorFont(m_font);
    editor->releaseKeys(m_windowKeys);
    editor->setWrapMode(m_wordWrap ? QsciScintilla::WrapWord : QsciScintilla::WrapNone);
    editor->setWhitespaceVisibility(m_showWhitespace ? QsciScintilla::WsVisible : QsciScintilla::WsInvisible);
    connect(editor, &QsciScintilla::modificationChanged, this, [this, editor] { updateTitle(editor); });
    connect(editor, &QsciScintilla::textChanged, this, [this, editor] {
        if (editor->filePath().isEmpty())
            scheduleBufferSave();
    });
    return editor;
}

CodeEditor *EditorTabs::openFileTab(const QString &path, const QString &text, const QString &lexerHint)
{
    CodeEditor *editor = newEditor();
    editor->setFilePath(canonical(path));
    editor->setLexerHint(lexerHint);
    editor->setText(text);
    editor->setModified(false);
    CodeEditor *placeholder = emptyPlaceholder();
    setCurrentIndex(addTab(editor, QString()));
    updateTitle(editor);
    dropPlaceholder(placeholder);
    return editor;
}

CodeEditor *EditorTabs::openBufferTab(const QString &workspace, const QString &contextId, const QString &title,
                                      const QString &lexerHint)
{
    CodeEditor *editor = bufferEditor(workspace, contextId);
    CodeEditor *placeholder = editor ? nullptr : emptyPlaceholder();
    if (!editor) {
        editor = newEditor();
        editor->bind(workspace, contextId);
        editor->setProperty("title", title);
        editor->setLexerHint(lexerHint);
        editor->setText(m_settings.value(bufferKey(workspace, contextId)).toString());
        editor->setModified(false);
        addTab(editor, QString());
        updateTitle(editor);
    }
    setCurrentWidget(editor);
    dropPlaceholder(placeholder);
    return editor;
}

void EditorTabs::bind(CodeEditor *editor, const QString &workspace, const QString &contextId, const QString &title)
{
    const bool unboundBuffer = editor->filePath().isEmpty() && editor->contextId().isEmpty();
    editor->bind(workspace, contextId);
    if (unboundBuffer) {
        m_settings.remove(QLatin1String(kUnboundKey));
        editor->setProperty("title", title);
        m_settings.setValue(bufferKey(workspace, contextId), editor->text());
    }
    updateTitle(editor);
}

void EditorTabs::renameContext(const QString &contextId, const QString &title)
{
    for (CodeEditor *editor : editors()) {
        if (editor->contextId() != contextId)
            continue;
        if (editor->filePath().isEmpty())
            editor->setProperty("title", title);
        updateTitle(editor);
    }
}

void EditorTabs::removeContext(const QString &workspace, const QString &contextId)
{
    m_settings.remove(bufferKey(workspace, contextId));
    for (CodeEditor *editor : editors()) {
        if (editor->contextId() != contextId || editor->workspace() != workspace)
            continue;
        if (editor->filePath().isEmpty()) {
            removeTab(indexOf(editor));
            editor->deleteLater();
        } else {
            editor->bind(QString(), QString());
            updateTitle(editor);
        }
    }
    ensureOneTab();
}

bool EditorTabs::save(CodeEditor *editor, const QString &path, QString *error)
{
    const QString target = path.isEmpty() ? editor->filePath() : path;
    QSaveFile file(target);
    if (!file.open(QIODevice::WriteOnly) || file.write(editor->text().toUtf8()) < 0 || !file.commit()) {
        *error = file.errorString();
        return false;
    }
    if (editor->filePath().isEmpty()) {
        // A buffer saved as a file becomes that file; the context's buffer starts empty.
        m_settings.remove(editor->contextId().isEmpty() ? QString::fromLatin1(kUnboundKey)
                                                        : bufferKey(editor->workspace(), editor->contextId()));
    }
    editor->setFilePath(canonical(target));
    editor->setModified(false);
    updateTitle(editor);
    saveState();
    return true;
}

bool EditorTabs::closeTab(int index)
{
    CodeEditor *editor = editorAt(index);
    if (!editor)
        return false;
    if (!askToSave(editor, tr("Close File")))
        return false;
    if (editor->filePath().isEmpty())
        m_settings.setValue(editor->contextId().isEmpty() ? QString::fromLatin1(kUnboundKey)
                                                          : bufferKey(editor->workspace(), editor->contextId()),
                            editor->text());
    removeTab(index);
    editor->deleteLater();
    ensureOneTab();
    return true;
}

bool EditorTabs::confirmCloseAll()
{
    for (CodeEditor *editor : editors()) {
        if (!askToSave(editor, tr("Quit replhost")))
            return false;
    }
    return true;
}

bool EditorTabs::askToSave(CodeEditor *editor, const QString &title)
{
    if (editor->filePath().isEmpty() || !editor->isModified())
        return true;
    setCurrentWidget(editor);
    QMessageBox box(QMessageBox::Question, title,
                    tr("%1 has changes that are not saved.").arg(QFileInfo(editor->filePath()).fileName()),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("closeModifiedFile"));
    box.setDefaultButton(QMessageBox::Save);
    const int answer = box.exec();
    if (answer == QMessageBox::Cancel)
        return false;
    QString error;
    if (answer == QMessageBox::Save && !save(editor, QString(), &error)) {
        QMessageBox::warning(this, title, tr("Cannot save %1: %2").arg(editor->filePath(), error));
        return false;
    }
    return true;
}

QJsonArray EditorTabs::session() const
{
    QJsonArray tabs;
    for (CodeEditor *editor : editors()) {
        if (editor->filePath().isEmpty() && editor->contextId().isEmpty())
            continue;
        QJsonObject tab{{QStringLiteral("workspace"), editor->workspace()},
                        {QStringLiteral("context"), editor->contextId()}};
        if (!editor->filePath().isEmpty())
            tab.insert(QStringLiteral("file"), editor->filePath());
        if (editor == currentEditor())
            tab.insert(QStringLiteral("current"), true);
        tabs.append(tab);
    }
    return tabs;
}

void EditorTabs::saveState()
{
    m_bufferSave.stop();
    for (CodeEditor *editor : editors()) {
        if (!editor->filePath().isEmpty())
            continue;
        m_settings.setValue(editor->contextId().isEmpty() ? QString::fromLatin1(kUnboundKey)
                                                          : bufferKey(editor->workspace(), editor->contextId()),
                            editor->text());
    }
    m_settings.setValue(QStringLiteral("session/tabs"), session().toVariantList());
    m_settings.sync();
}

void EditorTabs::setEditorFont(const QFont &font)
{
    m_font = font;
    for (CodeEditor *editor : editors())
        editor->setEditorFont(font);
}

void EditorTabs::setViewOptions(bool wordWrap, bool showWhitespace)
{
    m_wordWrap = wordWrap;
    m_showWhitespace = showWhitespace;
    for (CodeEditor *editor : editors()) {
        editor->setWrapMode(wordWrap ? QsciScintilla::WrapWord : QsciScintilla::WrapNone);
        editor->setWhitespaceVisibility(showWhitespace ? QsciScintilla::WsVisible : QsciScintilla::WsInvisible);
    }
}

void EditorTabs::setWindowKeys(const QList<QKeySequence> &keys)
{
    m_windowKeys = keys;
    for (CodeEditor *editor : editors())
        editor->releaseKeys(keys);
}

QString EditorTabs::bufferKey(const QString &workspace, const QString &contextId)
{
    return QStringLiteral("buffers/%1/%2").arg(workspace, contextId);
}

void EditorTabs::updateTitle(CodeEditor *editor)
{
    const int index = indexOf(editor);
    if (index < 0)
        return;
    QString title, tip;
    if (!editor->filePath().isEmpty()) {
        title = QFileInfo(editor->filePath()).fileName();
        if (editor->isModified())
            title += QStringLiteral(" *");
        tip = editor->filePath();
    } else if (!editor->contextId().isEmpty()) {
        title = editor->property("title").toString();
        tip = tr("The untitled buffer of %1, kept across restarts").arg(title);
    } else {
        title = tr("Untitled");
        tip = tr("Not bound to a context yet: running it creates one");
    }
    setTabText(index, title);
    setTabToolTip(index, tip);
}

CodeEditor *EditorTabs::emptyPlaceholder() const
{
    // The lone unbound buffer, with nothing typed into it, gives its place to the next tab.
    CodeEditor *only = count() == 1 ? editorAt(0) : nullptr;
    return only && only->filePath().isEmpty() && only->contextId().isEmpty() && only->text().isEmpty() ? only
                                                                                                      : nullptr;
}

void EditorTabs::dropPlaceholder(CodeEditor *placeholder)
{
    if (!placeholder || count() < 2)
        return;
    removeTab(indexOf(placeholder));
    placeholder->deleteLater();
}

void EditorTabs::scheduleBufferSave()
{
    m_bufferSave.start();
}

void EditorTabs::ensureOneTab()
{
    if (count() > 0)
        return;
    CodeEditor *editor = newEditor();
    editor->setText(m_settings.value(QLatin1String(kUnboundKey)).toString());
    editor->setModified(false);
    addTab(editor, QString());
    updateTitle(editor);
}

} // namespace replhost::gui
