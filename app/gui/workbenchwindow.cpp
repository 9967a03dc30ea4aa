// SPDX-License-Identifier: Apache-2.0
#include "workbenchwindow.h"

#include "actionicons.h"
#include "codeeditor.h"
#include "contexttree.h"
#include "editortabs.h"
#include "envpanel.h"
#include "filebrowser.h"
#include "findbar.h"
#include "historypanel.h"
#include "inputline.h"
#include "languagebadge.h"
#include "newcontextdialog.h"
#include "outputview.h"
#include "plotspanel.h"
#include "pluginsdialog.h"
#include "preferencesdialog.h"
#include "serverpanel.h"
#include "shortcutsdialog.h"
#include "variablespanel.h"
#include "workspacesettingsdialog.h"
#include "themes.h"

#include "core/engine.h"  // its version numbers; the workspace settings of an engine in this process

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSet>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QTabBar>
#include <QTableWidget>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace replhost::gui {

using sdk::Event;

namespace {

// "python 1", "python 2", …: the first such name no context of the workspace has, for contexts
// created without a name, so that the tree does not list them by their ids' hash.
QString unusedName(const EngineClient &engine, const QString &workspace, const QString &language)
{
    QSet<QString> taken;
    for (const core::ContextInfo &info : engine.contexts(workspace))
        taken.insert(info.name);
    for (int n = 1;; ++n) {
        const QString name = QStringLiteral("%1 %2").arg(language).arg(n);
        if (!taken.contains(name))
            return name;
    }
}

// Files bigger than this are not loaded into the editor.
constexpr qint64 kMaxEditorBytes = 16 * 1024 * 1024;

// The text of a file the user opens (from Files or a dialog). Code in a context can put a FIFO,
// a socket or a device where a file was, and this runs on the GUI thread (the engine's too, when
// the engine is in this process):
// the open never waits (O_NONBLOCK), and only a regular file of a sensible size is read.
Result<QByteArray> readForEditor(const QString &path)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return makeError(QStringLiteral("io"), QString::fromLocal8Bit(strerror(errno)));
    QFile file;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError(QStringLiteral("bad_request"), QObject::tr("it is not a regular file"));
    }
    if (st.st_size > kMaxEditorBytes) {
        ::close(fd);
        return makeError(QStringLiteral("bad_request"),
                         QObject::tr("it is larger than %1 MiB").arg(kMaxEditorBytes / (1024 * 1024)));
    }
    if (!file.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle))
        return makeError(QStringLiteral("io"), file.errorString());
    QByteArray text = file.readAll();
    // A NUL in the first bytes: an image, an archive, a database; not text to edit or run.
    if (text.left(8192).contains('\0'))
        return makeError(QStringLiteral("bad_request"), QObject::tr("it is not a text file"));
    return text;
}

QString formatDuration(qint64 ms)
{
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms);
    if (ms < 60'000)
        return QStringLiteral("%1 s").arg(ms / 1000.0, 0, 'f', 2);
    return QStringLiteral("%1 min %2 s").arg(ms / 60'000).arg((ms % 60'000) / 1000);
}

} // namespace

WorkbenchWindow::WorkbenchWindow(EngineClient &engine, WorkbenchOptions options, QWidget *parent)
    : QMainWindow(parent)
    , m_engine(engine)
    , m_options(std::move(options))
    , m_settings(WorkbenchSettings::open(m_options.settingsFile))
    , m_prefs(WorkbenchSettings::load(*m_settings))
{
    setWindowTitle(engine.isAttached() ? tr("replhost — attached to %1").arg(engine.description())
                                       : tr("replhost — %1").arg(engine.dataDir()));
    setObjectName(QStringLiteral("WorkbenchWindow"));
    Themes::apply(m_prefs.theme);
    buildWidgets();
    buildActions();
    // The editors leave the window's keys to its actions, except those they handle the same
    // way themselves (undo, copy, …) and Esc, which also closes their lists.
    QList<QKeySequence> windowKeys;
    for (const QAction *action : std::as_const(m_actions)) {
        if (action->property("editorKeepsKeys").toBool())
            continue;
        for (const QKeySequence &key : action->shortcuts()) {
            if (key != QKeySequence(Qt::Key_Escape))
                windowKeys.append(key);
        }
    }
    m_tabs->setWindowKeys(windowKeys);

    connect(&engine, &EngineClient::executionStarted, this, &WorkbenchWindow::onExecutionStarted);
    connect(&engine, &EngineClient::backgroundOutputAdded, this, &WorkbenchWindow::onBackgroundOutput);
    connect(&engine, &EngineClient::contextChanged, this, &WorkbenchWindow::onContextChanged);
    // Kept beside the engine's name, since the replies that fail next replace the message.
    connect(&engine, &EngineClient::connectionLost, this, [this](const QString &why) {
        m_serverStatus->setText(tr("Attached to %1 — it cannot be reached").arg(m_engine.description()));
        m_serverStatus->setToolTip(why);
        statusBar()->showMessage(tr("The engine cannot be reached: %1").arg(why));
    });
    connect(&engine, &EngineClient::contextRemoved, this,
            [this](const QString &workspace, const QString &id) {
                m_transcripts.remove(id);
                m_restartsAfter.remove(id);
                m_tabs->removeContext(workspace, id);
            });

    m_statusTicker.setInterval(100);
    connect(&m_statusTicker, &QTimer::timeout, this, &WorkbenchWindow::updateRunStatus);

    resize(1280, 820);
    if (!m_prefs.windowGeometry.isEmpty())
        restoreGeometry(m_prefs.windowGeometry);
    if (!m_prefs.windowState.isEmpty())
        restoreState(m_prefs.windowState);
    applyPreferences(m_prefs);

    // Start with the tabs of the last session, or else the most recently used context's
    // buffer, so the editor is ready to run.
    restoreSession();
    const QList<core::ContextInfo> all = engine.contexts(core::WorkspaceManager::defaultName());
    if (m_contextId.isEmpty() && !all.isEmpty()) {
        const auto latest = std::max_element(all.begin(), all.end(), [](const auto &a, const auto &b) {
            return a.lastUsedAt < b.lastUsedAt;
        });
        m_tree->selectContext(latest->id);
    }
    if (m_contextId.isEmpty())
        onContextSelected(core::WorkspaceManager::defaultName(), QString());

    // An attached window's engine is served by the server it is attached to.
    if (engine.localEngine()) {
        if (m_options.servePort)
            m_server->start(*m_options.servePort);
        else if (m_prefs.serverAutostart)
            m_server->start(m_prefs.serverPort);
    }
    updateActions();
    updateServerStatus();
}

WorkbenchWindow::~WorkbenchWindow()
{
    // The buffers and the session are written while the settings are still there.
    m_tabs->saveState();
}

CodeEditor *WorkbenchWindow::editor() const
{
    return m_tabs->currentEditor();
}

void WorkbenchWindow::buildWidgets()
{
    m_tree = new ContextTree(m_engine, this);
    m_files = new FileBrowser(this);
    m_tabs = new EditorTabs(*m_settings, this);
    m_find = new FindBar(this);
    m_output = new OutputView(this);
    m_input = new InputLine(m_engine, this);
    m_history = new HistoryPanel(m_engine, this);
    m_env = new EnvPanel(m_engine, this);
    m_server = new ServerPanel(m_engine.localEngine(), m_options.tokenOverride, this);
    m_variables = new VariablesPanel(m_engine, this);
    m_plots = new PlotsPanel(m_engine, this);
    m_output->setObjectName(QStringLiteral("output"));

    m_editorTitle = new QLabel(this);
    m_editorTitle->setTextFormat(Qt::PlainText);
    m_editorTitle->setContentsMargins(6, 3, 6, 3);
    // A long working directory must not widen the window: the label is cut, its tooltip whole.
    m_editorTitle->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto *editorPane = new QWidget(this);
    // On a narrow window the docks give way: the code stays readable and the tabs' names whole.
    editorPane->setMinimumWidth(480);
    auto *editorLayout = new QVBoxLayout(editorPane);
    editorLayout->setContentsMargins(0, 0, 0, 0);
    editorLayout->setSpacing(0);
    editorLayout->addWidget(m_editorTitle);
    editorLayout->addWidget(m_tabs, 1);
    editorLayout->addWidget(m_find);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("editorOutputSplitter"));
    splitter->addWidget(editorPane);
    auto *outputPane = new QWidget(this);
    auto *outputLayout = new QVBoxLayout(outputPane);
    outputLayout->setContentsMargins(0, 0, 0, 0);
    outputLayout->setSpacing(0);
    outputLayout->addWidget(m_output, 1);
    outputLayout->addWidget(m_input);
    splitter->addWidget(outputPane);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setChildrenCollapsible(false);
    setCentralWidget(splitter);

    m_contextsDock = addDock(QStringLiteral("contextsDock"), tr("Contexts"), m_tree, Qt::LeftDockWidgetArea);
    m_filesDock = addDock(QStringLiteral("filesDock"), tr("Files"), m_files, Qt::LeftDockWidgetArea);
    splitDockWidget(m_contextsDock, m_filesDock, Qt::Vertical);
    m_variablesDock = addDock(QStringLiteral("variablesDock"), tr("Variables"), m_variables, Qt::RightDockWidgetArea);
    m_plotsDock = addDock(QStringLiteral("plotsDock"), tr("Plots"), m_plots, Qt::RightDockWidgetArea);
    m_historyDock = addDock(QStringLiteral("historyDock"), tr("History"), m_history, Qt::RightDockWidgetArea);
    m_envDock = addDock(QStringLiteral("envDock"), tr("Environment"), m_env, Qt::RightDockWidgetArea);
    m_serverDock = addDock(QStringLiteral("serverDock"), tr("Server"), m_server, Qt::RightDockWidgetArea);
    tabifyDockWidget(m_variablesDock, m_plotsDock);
    tabifyDockWidget(m_plotsDock, m_historyDock);
    tabifyDockWidget(m_historyDock, m_envDock);
    tabifyDockWidget(m_envDock, m_serverDock);
    m_historyDock->raise();
    // Five panels share the right: their tabs keep their whole titles and scroll when the
    // window is narrow, instead of being cut to "Vari…" (Qt's dock tab bars elide).
    const auto keepTabTitlesWhole = [this] {
        for (QTabBar *bar : findChildren<QTabBar *>(Qt::FindDirectChildrenOnly)) {
            bar->setElideMode(Qt::ElideNone);
            bar->setUsesScrollButtons(true);
        }
    };
    QTimer::singleShot(0, this, keepTabTitlesWhole);
    connect(this, &QMainWindow::tabifiedDockWidgetActivated, this, keepTabTitlesWhole);
    resizeDocks({m_contextsDock, m_historyDock}, {300, 400}, Qt::Horizontal);
    resizeDocks({m_contextsDock, m_filesDock}, {480, 220}, Qt::Vertical);

    m_runStatus = new QLabel(this);
    m_serverStatus = new QLabel(this);
    m_serverStatus->setObjectName(QStringLiteral("serverStatus"));
    statusBar()->addWidget(m_runStatus, 1);
    statusBar()->addPermanentWidget(m_serverStatus);

    connect(m_tree, &ContextTree::currentContextChanged, this, &WorkbenchWindow::onContextSelected);
    connect(m_tree, &QTreeWidget::itemActivated, this, [this] { editor()->setFocus(); });
    connect(m_tabs, &EditorTabs::currentEditorChanged, this, &WorkbenchWindow::onEditorChanged);
    m_find->setEditor(editor());
    connect(m_files, &FileBrowser::openRequested, this, &WorkbenchWindow::openFile);
    connect(m_history, &HistoryPanel::rerunRequested, this, [this](const QString &code) { runCode(code); });
    connect(m_history, &HistoryPanel::copyToEditorRequested, this, [this](const QString &code) {
        // One undoable step: Ctrl+Z brings back what the editor had.
        editor()->replaceTextUndoable(code);
        editor()->setFocus();
        statusBar()->showMessage(tr("Copied into the editor; Ctrl+Z brings back what was there."), 5000);
    });
    connect(m_output, &OutputView::saveFullOutputRequested, this, &WorkbenchWindow::saveFullOutput);
    connect(m_history->outputView(), &OutputView::saveFullOutputRequested, this, &WorkbenchWindow::saveFullOutput);
    connect(m_server, &ServerPanel::runningChanged, this, &WorkbenchWindow::updateServerStatus);
}

QDockWidget *WorkbenchWindow::addDock(const QString &name, const QString &title, QWidget *widget,
                                      Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(name);  // saveState()/restoreState() key
    dock->setWidget(widget);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetClosable
                      | QDockWidget::DockWidgetFloatable);
    addDockWidget(area, dock);
    return dock;
}

QAction *WorkbenchWindow::addAction(const QString &name, const QString &text,
                                    const QList<QKeySequence> &defaultKeys, const QString &tip,
                                    std::function<void()> slot)
{
    auto *action = new QAction(text, this);
    // "shortcuts/<action name>" in the preferences file overrides the default keys: one or
    // more key sequences separated by ";" (empty: none), as the help dialog lists them.
    QList<QKeySequence> keys = defaultKeys;
    if (const QString custom = QStringLiteral("shortcuts/%1").arg(name); m_settings->contains(custom))
        keys = QKeySequence::listFromString(m_settings->value(custom).toString(), QKeySequence::PortableText);
    action->setObjectName(name);
    action->setShortcuts(keys);
    action->setStatusTip(tip);
    action->setToolTip(keys.isEmpty() ? tip
                                      : QStringLiteral("%1 (%2)").arg(tip, keys.first().toString(QKeySequence::NativeText)));
    action->setShortcutContext(Qt::WindowShortcut);
    connect(action, &QAction::triggered, this, std::move(slot));
    QMainWindow::addAction(action);
    m_actions.append(action);
    return action;
}

QAction *WorkbenchWindow::action(const QString &objectName) const
{
    for (QAction *action : m_actions) {
        if (action->objectName() == objectName)
            return action;
    }
    return nullptr;
}

void WorkbenchWindow::buildActions()
{
    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    QMenu *editMenu = menuBar()->addMenu(tr("&Edit"));
    QMenu *contextMenu = menuBar()->addMenu(tr("&Context"));
    QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
    QMenu *helpMenu = menuBar()->addMenu(tr("&Help"));
    QToolBar *toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolBar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setMovable(false);

    QAction *newContext = addAction(QStringLiteral("actionNewContext"), tr("&New Context…"),
                                    {QKeySequence(Qt::CTRL | Qt::Key_N)},
                                    tr("Create a context in a language"), [this] {
        NewContextDialog dialog(m_engine, m_prefs.defaultLanguage, m_workspace, this);
        if (dialog.exec() == QDialog::Accepted)
            createContext(dialog.request());
    });
    newContext->setIcon(style()->standardIcon(QStyle::SP_FileIcon));
    QAction *run = addAction(QStringLiteral("actionRun"), tr("&Run Cell"),
                             {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)},
                             tr("Run the cell under the cursor (# %% or // %% lines delimit cells; "
                                "without them, the whole text), or the selection"),
                             [this] { runEditor(); });
    run->setIcon(ActionIcons::run());
    QAction *runAdvance = addAction(QStringLiteral("actionRunAdvance"), tr("Run Cell and &Advance"),
                                    {QKeySequence(Qt::SHIFT | Qt::Key_Return), QKeySequence(Qt::SHIFT | Qt::Key_Enter)},
                                    tr("Run the cell (or the selection) and go to the next cell"),
                                    [this] { runCellAndAdvance(); });
    QAction *runLineAction = addAction(QStringLiteral("actionRunLine"), tr("Run &Line"), {QKeySequence(Qt::Key_F9)},
                                       tr("Run the cursor's line (or the selection) and go to the next line"),
                                       [this] { runLine(); });
    QAction *runAllAction = addAction(QStringLiteral("actionRunAll"), tr("Run A&ll"), {QKeySequence(Qt::Key_F5)},
                                      tr("Run the tab's whole text"), [this] { runAll(); });
    QAction *restartRunAll = addAction(QStringLiteral("actionRestartRunAll"), tr("Restart and Run All"),
                                       {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F5)},
                                       tr("Restart the context, then run the tab's whole text"),
                                       [this] { restartAndRunAll(); });
    QAction *interrupt = addAction(QStringLiteral("actionInterrupt"), tr("&Interrupt"),
                                   {QKeySequence(Qt::Key_Escape)},
                                   tr("Interrupt the running code; the context keeps its state"),
                                   [this] { interruptCurrent(); });
    interrupt->setIcon(ActionIcons::interrupt());
    QAction *restart = addAction(QStringLiteral("actionRestart"), tr("Re&start"),
                                 {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R)},
                                 tr("Start a fresh interpreter for the context (it asks first: the state is lost)"),
                                 [this] { restartCurrent(); });
    restart->setIcon(style()->standardIcon(QStyle::SP_BrowserReload));
    QAction *rename = addAction(QStringLiteral("actionRename"), tr("Re&name…"),
                                {QKeySequence(Qt::Key_F2)}, tr("Give the context a name"),
                                [this] { renameCurrent(); });
    QAction *copyId = addAction(QStringLiteral("actionCopyContextId"), tr("Copy Context &Id"), {},
                                tr("Copy the context's id, which the HTTP API and the command line take"), [this] {
        if (m_contextId.isEmpty())
            return;
        QGuiApplication::clipboard()->setText(m_contextId);
        statusBar()->showMessage(tr("Copied %1").arg(m_contextId), 4000);
    });
    QAction *remove = addAction(QStringLiteral("actionDelete"), tr("&Delete Context"),
                                {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Delete)},
                                tr("Stop the context's interpreter and delete it with its history"),
                                [this] { deleteCurrent(); });
    remove->setIcon(style()->standardIcon(QStyle::SP_TrashIcon));
    QAction *workspaceSettings = addAction(
        QStringLiteral("actionWorkspaceSettings"), tr("&Workspace Settings…"), {},
        tr("Limits, isolation and network of the selected workspace"), [this] {
            WorkspaceSettingsDialog dialog(m_engine, m_workspace, this);
            dialog.exec();
        });
    QAction *complete = addAction(QStringLiteral("actionComplete"), tr("&Complete"),
                                  {QKeySequence(Qt::CTRL | Qt::Key_Space)},
                                  tr("Complete the name before the cursor, asking the context"),
                                  [this] { requestCompletion(); });
    QAction *next = addAction(QStringLiteral("actionNextContext"), tr("Ne&xt Context"),
                              {QKeySequence(Qt::CTRL | Qt::Key_PageDown)}, tr("Select the next context"),
                              [this] { m_tree->stepContext(+1); });
    QAction *previous = addAction(QStringLiteral("actionPreviousContext"), tr("Pre&vious Context"),
                                  {QKeySequence(Qt::CTRL | Qt::Key_PageUp)}, tr("Select the previous context"),
                                  [this] { m_tree->stepContext(-1); });
    QAction *clear = addAction(QStringLiteral("actionClearOutput"), tr("C&lear Output"),
                               {QKeySequence(Qt::CTRL | Qt::Key_L)}, tr("Clear the output view"),
                               [this] { m_output->clearAll(); m_transcripts.remove(m_contextId); });

    QAction *newFile = addAction(QStringLiteral("actionNewFile"), tr("&New File…"),
                                 {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N)},
                                 tr("Create a file and open it in a tab"), [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("New File"), m_files->root());
        if (path.isEmpty())
            return;
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            statusBar()->showMessage(tr("Cannot create %1: %2").arg(path, file.errorString()), 8000);
            return;
        }
        file.close();
        openFile(path);
    });
    QAction *open = addAction(QStringLiteral("actionOpenFile"), tr("&Open File…"),
                              {QKeySequence(QKeySequence::Open)}, tr("Open a file in a tab of its own"), [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open File"), m_files->root());
        if (!path.isEmpty())
            openFile(path);
    });
    QAction *save = addAction(QStringLiteral("actionSave"), tr("&Save"), {QKeySequence(Qt::CTRL | Qt::Key_S)},
                              tr("Save the tab's file (a context's buffer asks for a file name)"),
                              [this] { saveCurrent(); });
    QAction *saveAs = addAction(QStringLiteral("actionSaveAs"), tr("Save &As…"),
                                {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)},
                                tr("Save the tab under another name; the tab becomes that file"), [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save As"), editor()->filePath().isEmpty()
                                                                                      ? m_files->root()
                                                                                      : editor()->filePath());
        if (!path.isEmpty())
            saveCurrentAs(path);
    });
    QAction *closeTab = addAction(QStringLiteral("actionCloseTab"), tr("&Close Tab"),
                                  {QKeySequence(Qt::CTRL | Qt::Key_W)},
                                  tr("Close the tab (a file with unsaved changes asks; a buffer is kept)"),
                                  [this] { m_tabs->closeTab(m_tabs->currentIndex()); });
    QAction *runFile = addAction(QStringLiteral("actionRunFile"), tr("Run &File"),
                                 {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Return)},
                                 tr("Run the file selected in Files in the context"), [this] {
        const QString path = m_files->currentFile();
        if (path.isEmpty()) {
            statusBar()->showMessage(tr("Select a file in Files first."), 5000);
            return;
        }
        const Result<QByteArray> text = readForEditor(path);
        if (!text) {
            statusBar()->showMessage(tr("Cannot read %1: %2").arg(path, text.error().message), 8000);
            return;
        }
        runCode(QString::fromUtf8(*text));
    });
    QAction *preferences = addAction(QStringLiteral("actionPreferences"), tr("&Preferences…"),
                                     {QKeySequence(Qt::CTRL | Qt::Key_Comma)},
                                     tr("Fonts, theme, default language, server autostart"),
                                     [this] { showPreferences(); });
    QAction *quit = addAction(QStringLiteral("actionQuit"), tr("&Quit"), {QKeySequence(Qt::CTRL | Qt::Key_Q)},
                              tr("Close the workbench (contexts stay, their interpreters stop)"),
                              [this] { close(); });

    QAction *focusContexts = addAction(QStringLiteral("actionFocusContexts"), tr("Contexts"),
                                       {QKeySequence(Qt::CTRL | Qt::Key_1)}, tr("Go to the context tree"),
                                       [this] { focusDock(m_contextsDock, m_tree); });
    QAction *focusEditor = addAction(QStringLiteral("actionFocusEditor"), tr("Editor"),
                                     {QKeySequence(Qt::CTRL | Qt::Key_2)}, tr("Go to the editor"),
                                     [this] { editor()->setFocus(); });
    QAction *focusOutput = addAction(QStringLiteral("actionFocusOutput"), tr("Output"),
                                     {QKeySequence(Qt::CTRL | Qt::Key_3)}, tr("Go to the output"),
                                     [this] { m_output->setFocus(); });
    QAction *focusHistory = addAction(QStringLiteral("actionFocusHistory"), tr("History"),
                                      {QKeySequence(Qt::CTRL | Qt::Key_4)}, tr("Show the context's execution history"),
                                      [this] { focusDock(m_historyDock, m_history); });
    QAction *focusEnv = addAction(QStringLiteral("actionFocusEnv"), tr("Environment"),
                                  {QKeySequence(Qt::CTRL | Qt::Key_5)}, tr("Show the env layers"),
                                  [this] { focusDock(m_envDock, m_env); });
    QAction *focusFiles = addAction(QStringLiteral("actionFocusFiles"), tr("Files"),
                                    {QKeySequence(Qt::CTRL | Qt::Key_6)}, tr("Show the workspace's files"),
                                    [this] { focusDock(m_filesDock, m_files->view()); });
    QAction *focusServer = addAction(QStringLiteral("actionFocusServer"), tr("Server"),
                                     {QKeySequence(Qt::CTRL | Qt::Key_7)}, tr("Show the HTTP server panel"),
                                     [this] { focusDock(m_serverDock, m_server); });
    QAction *focusVariables = addAction(QStringLiteral("actionFocusVariables"), tr("Variables"),
                                        {QKeySequence(Qt::CTRL | Qt::Key_8)},
                                        tr("Show the context's variables"),
                                        [this] { focusDock(m_variablesDock, m_variables->table()); });
    QAction *focusPlots = addAction(QStringLiteral("actionFocusPlots"), tr("Plots"),
                                    {QKeySequence(Qt::CTRL | Qt::Key_9)},
                                    tr("Show every plot the context made, newest first"),
                                    [this] { focusDock(m_plotsDock, m_plots->list()); });
    QAction *toggleServer = addAction(QStringLiteral("actionToggleServer"), tr("Start/Stop &Server"),
                                      {QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S)},
                                      tr("Start or stop the embedded HTTP server"), [this] {
        if (m_server->isRunning())
            m_server->stop();
        else
            m_server->start(m_prefs.serverPort);
        focusDock(m_serverDock, m_server);
    });
    QAction *plugins = addAction(QStringLiteral("actionPlugins"), tr("&Plugins…"),
                                 {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P)},
                                 tr("Every language plugin, its runtime and any load error"),
                                 [this] { showPlugins(); });
    QAction *shortcuts = addAction(QStringLiteral("actionShortcuts"), tr("&Keyboard Shortcuts"),
                                   {QKeySequence(QKeySequence::HelpContents)}, tr("List every shortcut"),
                                   [this] { showShortcuts(); });
    QAction *about = addAction(QStringLiteral("actionAbout"), tr("&About replhost"), {},
                               tr("Versions of the app, SDK and database schema"), [this] {
        QMessageBox::about(this, tr("About replhost"),
                           tr("<b>replhost %1</b><p>Stateful code contexts for people and agents, "
                              "on your own machine.</p><p>Data directory: %2<br>Database schema %3</p>")
                                   .arg(core::Engine::appVersion(), m_engine.dataDir().toHtmlEscaped())
                                   .arg(core::Engine::schemaVersion()));
    });

    // The editor handles these keys itself when it has the focus (the actions do the same to
    // the current tab from the menu), so they stay in its key map.
    const auto editorAction = [this](const QString &name, const QString &text, QKeySequence::StandardKey key,
                                     const QString &tip, void (QsciScintilla::*method)()) {
        QAction *action = addAction(name, text, QKeySequence::keyBindings(key), tip,
                                    [this, method] { (editor()->*method)(); });
        action->setProperty("editorKeepsKeys", true);
        return action;
    };
    QAction *undo = editorAction(QStringLiteral("actionUndo"), tr("&Undo"), QKeySequence::Undo,
                                 tr("Undo the last change in the editor"), &QsciScintilla::undo);
    QAction *redo = editorAction(QStringLiteral("actionRedo"), tr("&Redo"), QKeySequence::Redo,
                                 tr("Redo what was undone"), &QsciScintilla::redo);
    QAction *cut = editorAction(QStringLiteral("actionCut"), tr("Cu&t"), QKeySequence::Cut,
                                tr("Cut the selection"), &QsciScintilla::cut);
    QAction *copy = editorAction(QStringLiteral("actionCopy"), tr("&Copy"), QKeySequence::Copy,
                                 tr("Copy the selection"), &QsciScintilla::copy);
    QAction *paste = editorAction(QStringLiteral("actionPaste"), tr("&Paste"), QKeySequence::Paste,
                                  tr("Paste at the cursor"), &QsciScintilla::paste);
    QAction *selectAll = addAction(QStringLiteral("actionSelectAll"), tr("Select &All"),
                                   QKeySequence::keyBindings(QKeySequence::SelectAll), tr("Select the whole text"),
                                   [this] { editor()->selectAll(); });
    selectAll->setProperty("editorKeepsKeys", true);
    QAction *find = addAction(QStringLiteral("actionFind"), tr("&Find…"), {QKeySequence(Qt::CTRL | Qt::Key_F)},
                              tr("Find in the tab (Esc closes the bar)"), [this] { m_find->showFind(); });
    QAction *replace = addAction(QStringLiteral("actionReplace"), tr("R&eplace…"),
                                 {QKeySequence(Qt::CTRL | Qt::Key_H)}, tr("Find and replace in the tab"),
                                 [this] { m_find->showReplace(); });
    QAction *findNext = addAction(QStringLiteral("actionFindNext"), tr("Find &Next"), {QKeySequence(Qt::Key_F3)},
                                  tr("Go to the next match"), [this] { m_find->findNext(); });
    QAction *findPrevious = addAction(QStringLiteral("actionFindPrevious"), tr("Find Pre&vious"),
                                      {QKeySequence(Qt::SHIFT | Qt::Key_F3)}, tr("Go to the previous match"),
                                      [this] { m_find->findPrevious(); });
    QAction *comment = addAction(QStringLiteral("actionToggleComment"), tr("Toggle Co&mment"),
                                 {QKeySequence(Qt::CTRL | Qt::Key_Slash)},
                                 tr("Comment or uncomment the selected lines (# or //, by language)"),
                                 [this] { editor()->toggleComment(); });
    editMenu->addActions({undo, redo});
    editMenu->addSeparator();
    editMenu->addActions({cut, copy, paste, selectAll});
    editMenu->addSeparator();
    editMenu->addActions({find, replace, findNext, findPrevious});
    editMenu->addSeparator();
    editMenu->addAction(comment);

    fileMenu->addActions({newFile, open, save, saveAs, closeTab});
    fileMenu->addSeparator();
    fileMenu->addActions({runFile});
    fileMenu->addSeparator();
    fileMenu->addActions({preferences});
    fileMenu->addSeparator();
    fileMenu->addAction(quit);
    contextMenu->addActions({newContext, run, runAdvance, runLineAction, runAllAction, interrupt, restart,
                             restartRunAll, rename, copyId, remove});
    contextMenu->addSeparator();
    contextMenu->addAction(workspaceSettings);
    contextMenu->addSeparator();
    contextMenu->addActions({complete, next, previous, clear});
    viewMenu->addActions({focusContexts, focusEditor, focusOutput, focusVariables, focusPlots, focusHistory,
                          focusEnv, focusFiles, focusServer});
    viewMenu->addSeparator();
    viewMenu->addActions({toggleServer, plugins});
    // Each panel once: its entry shows and focuses it; its title bar's button hides it.
    helpMenu->addActions({shortcuts, about});
    toolbar->addActions({newContext, run, interrupt, restart});
    toolbar->addSeparator();
    toolbar->addAction(remove);

    // The tree's own Delete key, so deleting from the tree needs no chord. A shortcut, not an
    // action of the tree: the tree's actions are its context menu.
    auto *treeDelete = new QShortcut(QKeySequence::Delete, m_tree, nullptr, nullptr, Qt::WidgetShortcut);
    connect(treeDelete, &QShortcut::activated, this, [this] { deleteCurrent(); });
    m_tree->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_tree->addActions({newContext, restart, interrupt, rename, copyId, remove, workspaceSettings});
}

void WorkbenchWindow::focusDock(QDockWidget *dock, QWidget *widget)
{
    dock->show();
    dock->raise();
    widget->setFocus();
}

QString WorkbenchWindow::lexerFor(const QString &language) const
{
    for (const core::PluginEntry &entry : m_engine.plugins()) {
        if (entry.state == core::PluginEntry::State::Loaded && entry.id == language)
            return entry.lexer.isEmpty() ? entry.id : entry.lexer;
    }
    return language;
}

QString WorkbenchWindow::languageForFile(const QString &path) const
{
    const QString suffix = QStringLiteral(".") + QFileInfo(path).suffix().toLower();
    for (const core::PluginEntry &entry : m_engine.plugins()) {
        if (entry.state == core::PluginEntry::State::Loaded && entry.extensions.contains(suffix))
            return entry.id;
    }
    return QString();
}

void WorkbenchWindow::onContextSelected(const QString &workspace, const QString &contextId)
{
    m_workspace = workspace.isEmpty() ? core::WorkspaceManager::defaultName() : workspace;
    m_contextId = contextId;
    m_lastExecution.reset();
    m_statusTicker.stop();
    m_input->showContext(contextId, m_transcripts.value(contextId));

    m_output->clearAll();
    m_contextLanguage.clear();
    m_contextState.clear();
    if (!contextId.isEmpty()) {
        QString title = contextId.left(8);
        if (auto info = m_engine.context(m_workspace, contextId)) {
            m_contextLanguage = info->language;
            m_contextState = info->state;
            title = ContextTree::displayName(*info);
        }
        // The current tab stays when it runs in this context; else the context's buffer shows.
        if (editor()->contextId() != contextId && !m_restoringSession)
            m_tabs->openBufferTab(m_workspace, contextId, title, lexerFor(m_contextLanguage));
        renderTranscript();
        const QList<core::ExecutionPtr> transcript = m_transcripts.value(contextId);
        if (!transcript.isEmpty())
            followForStatus(transcript.last());
    }
    updateEditorTitle();
    if (auto ws = m_engine.workspace(m_workspace))
        m_files->setRoot(ws->directory);
    m_history->setContext(m_workspace, contextId);
    m_env->setContext(m_workspace, contextId);
    m_server->setContext(m_workspace, contextId, m_contextLanguage);
    m_variables->setContext(m_workspace, contextId, m_contextState);
    m_plots->setContext(m_workspace, contextId);
    updateRunStatus();
    updateActions();
}

void WorkbenchWindow::onEditorChanged(CodeEditor *current)
{
    m_find->setEditor(current);
    if (m_restoringSession || !current)
        return;
    if (!current->contextId().isEmpty() && current->contextId() != m_contextId
        && m_tree->contextItem(current->contextId()))
        m_tree->selectContext(current->contextId());
    updateEditorTitle();
}

void WorkbenchWindow::updateEditorTitle()
{
    const CodeEditor *current = editor();
    const QString file = current && !current->filePath().isEmpty() ? QFileInfo(current->filePath()).fileName()
                                                                   : QString();
    const auto info = m_engine.context(m_workspace, m_contextId);
    if (!info) {
        m_editorTitle->setText(file.isEmpty() ? tr("No context selected — create one with Ctrl+N")
                                              : tr("%1 · no context: Ctrl+Enter creates one").arg(file));
        return;
    }
    const QString where = tr("%1 · %2 · %3").arg(ContextTree::displayName(*info), info->language, info->cwd);
    m_editorTitle->setText(file.isEmpty() ? where : tr("%1 — runs in %2").arg(file, where));
    m_editorTitle->setToolTip(m_editorTitle->text());
}

void WorkbenchWindow::restoreSession()
{
    const QVariantList tabs = m_settings->value(QStringLiteral("session/tabs")).toList();
    m_restoringSession = true;
    CodeEditor *current = nullptr;
    for (const QVariant &entry : tabs) {
        const QVariantMap tab = entry.toMap();
        const QString workspace = tab.value(QStringLiteral("workspace")).toString();
        const QString contextId = tab.value(QStringLiteral("context")).toString();
        const QString file = tab.value(QStringLiteral("file")).toString();
        const auto info = m_engine.context(workspace, contextId);
        CodeEditor *opened = nullptr;
        if (!file.isEmpty()) {
            const Result<QByteArray> text = readForEditor(file);
            if (!text)
                continue;  // moved or deleted since: nothing to show
            const QString language = languageForFile(file);
            opened = m_tabs->openFileTab(file, QString::fromUtf8(*text),
                                         lexerFor(language.isEmpty() && info ? info->language : language));
            if (info)
                m_tabs->bind(opened, workspace, contextId);
        } else if (info) {
            opened = m_tabs->openBufferTab(workspace, contextId, ContextTree::displayName(*info),
                                           lexerFor(info->language));
        }
        if (opened && tab.value(QStringLiteral("current")).toBool())
            current = opened;
    }
    m_restoringSession = false;
    if (current)
        m_tabs->setCurrentWidget(current);
    if (CodeEditor *shown = editor(); shown && !shown->contextId().isEmpty() && m_tree->contextItem(shown->contextId()))
        m_tree->selectContext(shown->contextId());
}

void WorkbenchWindow::renderTranscript()
{
    m_output->clearAll();
    if (m_contextId.isEmpty())
        return;
    // Background output goes after the run it followed; what followed runs no longer in the
    // transcript is left out.
    const QString workspace = m_workspace, contextId = m_contextId;
    QPointer<WorkbenchWindow> self(this);
    m_engine.backgroundOutput(workspace, contextId,
                              [self, workspace, contextId](Result<QList<core::BackgroundOutput::Entry>> page) {
        if (!self || self->m_workspace != workspace || self->m_contextId != contextId)
            return;  // the user moved on
        self->renderTranscript(page ? *page : QList<core::BackgroundOutput::Entry>());
    });
}

void WorkbenchWindow::renderTranscript(const QList<core::BackgroundOutput::Entry> &backgroundOutput)
{
    m_output->clearAll();
    QHash<QString, QList<core::BackgroundOutput::Entry>> background;
    for (const core::BackgroundOutput::Entry &entry : backgroundOutput)
        background[entry.afterExecutionId].append(entry);
    const QStringList restarts = m_restartsAfter.value(m_contextId);
    const auto restartLines = [&](const QString &afterId) {
        for (qsizetype n = restarts.count(afterId); n > 0; --n)
            m_output->addNote(tr("— restarted: a fresh interpreter, the state above is gone —"));
    };
    restartLines(QString());
    for (const core::ExecutionPtr &execution : m_transcripts.value(m_contextId)) {
        m_output->addExecution(execution);
        for (const core::BackgroundOutput::Entry &entry : background.value(execution->id()))
            m_output->addBackground(entry);
        restartLines(execution->id());
    }
}

void WorkbenchWindow::onBackgroundOutput(const QString &workspace, const QString &contextId,
                                         const core::BackgroundOutput::Entry &entry)
{
    if (contextId == m_contextId && workspace == m_workspace)
        m_output->addBackground(entry);
}

void WorkbenchWindow::onContextChanged(const core::ContextInfo &info)
{
    m_tabs->renameContext(info.id, ContextTree::displayName(info));
    if (info.id != m_contextId)
        return;
    // The variables are listed again whenever the interpreter is back to waiting for code.
    const bool nowIdle = info.state == QLatin1String("idle") && m_contextState != info.state;
    m_contextState = info.state;
    if (nowIdle)
        m_variables->refresh();
    updateEditorTitle();
    updateActions();
    updateRunStatus();
}

bool WorkbenchWindow::createContext(const core::CreateContextRequest &request, std::function<void()> then)
{
    core::CreateContextRequest named = request;
    if (named.name.trimmed().isEmpty() && !named.language.isEmpty())
        named.name = unusedName(m_engine, named.workspace, named.language);
    QPointer<WorkbenchWindow> self(this);
    auto refused = std::make_shared<bool>(false);
    m_engine.createContext(named, [self, then, refused](Result<core::ContextInfo> created) {
        if (!self)
            return;
        if (!created) {
            *refused = true;
            self->statusBar()->showMessage(tr("Cannot create the context: %1").arg(created.error().message), 10000);
            return;
        }
        self->onContextCreated(*created);
        if (then)
            then();
    });
    return !*refused;
}

void WorkbenchWindow::onContextCreated(const core::ContextInfo &created)
{
    // The tree lists it through contextAdded; a remote engine's answer may come first.
    m_tree->addContext(created);
    // What was typed before there was a context becomes the new context's buffer.
    CodeEditor *current = editor();
    if (current->contextId().isEmpty() && current->filePath().isEmpty()) {
        m_tabs->bind(current, created.workspace, created.id, ContextTree::displayName(created));
        current->setLexerHint(lexerFor(created.language));
    }
    m_tree->selectContext(created.id);
    editor()->setFocus();
}

core::ExecutionPtr WorkbenchWindow::runCode(const QString &code)
{
    m_runRefused = true;
    if (code.trimmed().isEmpty()) {
        statusBar()->showMessage(tr("Nothing to run."), 3000);
        return {};
    }
    // A tab runs in its own context, whatever the tree shows (a workspace, say).
    if (const QString bound = editor()->contextId();
        !bound.isEmpty() && bound != m_contextId && m_tree->contextItem(bound))
        m_tree->selectContext(bound);
    if (m_contextId.isEmpty()) {
        // Ctrl+Enter on an empty workbench should just work: make a context in the default
        // language, as the API does for a run that names only a language.
        core::CreateContextRequest request;
        request.workspace = m_workspace;
        request.language = m_prefs.defaultLanguage;
        auto started = std::make_shared<core::ExecutionPtr>();
        auto created = std::make_shared<bool>(false);
        QPointer<WorkbenchWindow> self(this);
        const bool taken = createContext(request, [self, code, started, created] {
            *created = true;
            if (self)
                *started = self->startRun(code);
        });
        if (taken && !*created)
            m_runRefused = false;  // the engine answers later
        return *started;
    }
    return startRun(code);
}

core::ExecutionPtr WorkbenchWindow::startRun(const QString &code)
{
    core::RunRequest request;
    request.workspace = m_workspace;
    request.contextId = m_contextId;
    request.code = code;
    request.input = true;  // the input line answers
    auto started = std::make_shared<core::ExecutionPtr>();
    QPointer<WorkbenchWindow> self(this);
    m_runRefused = false;
    m_engine.run(request, [self, started](Result<core::ExecutionPtr> execution) {
        if (!self)
            return;
        if (!execution) {
            self->m_runRefused = true;
            self->m_runStatus->setText(tr("Cannot run: %1").arg(execution.error().message));
            return;
        }
        *started = *execution;
        // A run that could start at once has been announced by executionStarted already; a
        // queued one is listed now, so what was asked for is visible before it starts.
        self->onExecutionStarted(*execution);
        self->followForStatus(*execution);
    });
    return *started;
}

void WorkbenchWindow::runEditor()
{
    runCode(editor()->codeToRun());
}

void WorkbenchWindow::runCellAndAdvance()
{
    CodeEditor *current = editor();
    const bool selection = current->hasSelectedText();
    if (!runCode(current->codeToRun()) && m_runRefused)
        return;
    if (selection) {
        int line = 0, index = 0, endLine = 0, endIndex = 0;
        current->getSelection(&line, &index, &endLine, &endIndex);
        current->setCursorPosition(endLine, endIndex);
    }
    current->moveToNextCell();
}

void WorkbenchWindow::runLine()
{
    CodeEditor *current = editor();
    const bool selection = current->hasSelectedText();
    if (!runCode(current->lineToRun()) && m_runRefused)
        return;
    if (!selection)
        current->moveToNextLine();
}

void WorkbenchWindow::runAll()
{
    runCode(editor()->text());
}

void WorkbenchWindow::restartAndRunAll()
{
    const QString code = editor()->text();
    if (code.trimmed().isEmpty()) {
        statusBar()->showMessage(tr("Nothing to run."), 3000);
        return;
    }
    // Without a context there is nothing to restart: the run creates one.
    if (m_contextId.isEmpty()) {
        runCode(code);
        return;
    }
    // The run goes once the engine has restarted the context, so it runs in the fresh one.
    QPointer<WorkbenchWindow> self(this);
    restartCurrent([self, code] {
        if (self)
            self->runCode(code);
    });
}

void WorkbenchWindow::onExecutionStarted(const core::ExecutionPtr &execution)
{
    m_history->noteExecution(execution);  // also when known: its row's status changed
    QList<core::ExecutionPtr> &transcript = m_transcripts[execution->contextId()];
    for (const core::ExecutionPtr &known : std::as_const(transcript)) {
        if (known->id() == execution->id())
            return;
    }
    transcript.append(execution);
    while (transcript.size() > kTranscriptKept)
        transcript.removeFirst();
    const core::ExecutionPtr keep = execution;
    connect(execution.get(), &core::Execution::finished, this,
            [this, keep] { onExecutionFinished(keep); }, Qt::SingleShotConnection);
    if (execution->contextId() == m_contextId) {
        m_output->addExecution(execution);
        m_plots->noteExecution(execution);
        followForStatus(execution);
    }
}

void WorkbenchWindow::onExecutionFinished(const core::ExecutionPtr &execution)
{
    if (execution->contextId() == m_contextId) {
        m_history->refresh();
        m_env->refreshEffective();
        m_variables->refresh();
    }
    updateRunStatus();
}

void WorkbenchWindow::followForStatus(const core::ExecutionPtr &execution)
{
    m_lastExecution = execution;
    if (!execution->isFinished()) {
        m_runClock.start();
        m_statusTicker.start();
    }
    updateRunStatus();
    updateActions();
}

QString WorkbenchWindow::runStatusText() const
{
    return m_runStatus->text();
}

void WorkbenchWindow::updateRunStatus()
{
    const core::ExecutionPtr &e = m_lastExecution;
    if (!e) {
        m_runStatus->setText(m_contextId.isEmpty() ? tr("Create a context (Ctrl+N) or just press Ctrl+Enter.")
                                                   : tr("Ready · %1").arg(m_contextState));
        return;
    }
    const QString count = e->executionCount() > 0 ? tr("[%1] ").arg(e->executionCount()) : QString();
    if (!e->isFinished()) {
        m_statusTicker.start();
        const qint64 elapsed = e->startedAt().isValid() ? e->startedAt().msecsTo(QDateTime::currentDateTime())
                                                        : m_runClock.elapsed();
        if (e->status() == QLatin1String("queued"))
            m_runStatus->setText(m_contextState == QLatin1String("starting")
                                         ? tr("Starting the interpreter…")
                                         : tr("Queued behind the running execution…"));
        else
            m_runStatus->setText(tr("%1Running · %2 · Esc interrupts").arg(count, formatDuration(qMax<qint64>(0, elapsed))));
        return;
    }
    m_statusTicker.stop();
    QString text = tr("%1%2 · %3").arg(count, e->status(), formatDuration(qMax<qint64>(0, e->durationMs())));
    if (m_output->hiddenCharacters() > 0)
        text += tr(" · long output capped in the view (full output: the link under it)");
    m_runStatus->setText(text);
    updateActions();
}

void WorkbenchWindow::updateActions()
{
    const bool haveContext = !m_contextId.isEmpty();
    const bool busy = m_contextState == QLatin1String("busy")
                      || (m_lastExecution && !m_lastExecution->isFinished());
    if (QAction *a = action(QStringLiteral("actionInterrupt")))
        a->setEnabled(haveContext && busy);  // idle: Esc goes to the focused widget
    for (const char *name : {"actionRestart", "actionDelete", "actionComplete"}) {
        if (QAction *a = action(QString::fromLatin1(name)))
            a->setEnabled(haveContext);
    }
}

void WorkbenchWindow::updateServerStatus()
{
    if (m_engine.isAttached())
        m_serverStatus->setText(tr("Attached to %1").arg(m_engine.description()));
    else
        m_serverStatus->setText(m_server->isRunning() ? tr("API: %1").arg(m_server->baseUrl()) : tr("API: off"));
}

void WorkbenchWindow::interruptCurrent()
{
    if (m_contextId.isEmpty())
        return;
    QPointer<WorkbenchWindow> self(this);
    m_engine.interrupt(m_workspace, m_contextId, [self](Result<void> r) {
        if (!self)
            return;
        if (!r)
            self->statusBar()->showMessage(tr("Cannot interrupt: %1").arg(r.error().message), 8000);
        else
            self->statusBar()->showMessage(tr("Interrupt sent."), 3000);
    });
}

bool WorkbenchWindow::confirm(const QString &objectName, const QString &title, const QString &text,
                              const QString &button, bool WorkbenchSettings::*ask)
{
    if (!(m_prefs.*ask))
        return true;
    QMessageBox box(QMessageBox::Question, title, text, QMessageBox::Cancel, this);
    box.setObjectName(objectName);
    QPushButton *go = box.addButton(button, QMessageBox::DestructiveRole);
    box.setDefaultButton(QMessageBox::Cancel);
    auto *dontAsk = new QCheckBox(tr("Don't ask again"), &box);
    dontAsk->setObjectName(QStringLiteral("dontAskAgain"));
    dontAsk->setToolTip(tr("Preferences can turn the question back on"));
    box.setCheckBox(dontAsk);
    box.exec();
    if (box.clickedButton() != go)
        return false;
    if (dontAsk->isChecked()) {
        m_prefs.*ask = false;
        m_prefs.save(*m_settings);
    }
    return true;
}

bool WorkbenchWindow::restartCurrent(std::function<void()> then)
{
    if (m_contextId.isEmpty())
        return false;
    const QString workspace = m_workspace, id = m_contextId;
    const auto info = m_engine.context(workspace, id);
    const QString name = info ? ContextTree::displayName(*info) : id;
    if (!confirm(QStringLiteral("confirmRestart"), tr("Restart Context"),
                 tr("Restart \"%1\"? Its variables, imports and definitions are lost.").arg(name),
                 tr("Restart"), &WorkbenchSettings::askBeforeRestart))
        return false;
    QPointer<WorkbenchWindow> self(this);
    auto refused = std::make_shared<bool>(false);
    m_engine.restartContext(workspace, id, [self, id, then, refused](Result<void> r) {
        if (!self)
            return;
        if (!r) {
            *refused = true;
            self->statusBar()->showMessage(tr("Cannot restart: %1").arg(r.error().message), 8000);
            return;
        }
        const QList<core::ExecutionPtr> transcript = self->m_transcripts.value(id);
        self->m_restartsAfter[id].append(transcript.isEmpty() ? QString() : transcript.last()->id());
        if (id == self->m_contextId)
            self->m_output->addNote(tr("— restarted: a fresh interpreter, the state above is gone —"));
        self->statusBar()->showMessage(tr("Restarting with a fresh interpreter."), 5000);
        if (then)
            then();
    });
    return !*refused;
}

void WorkbenchWindow::renameCurrent()
{
    if (m_contextId.isEmpty())
        return;
    const QString workspace = m_workspace, id = m_contextId;
    const auto info = m_engine.context(workspace, id);
    if (!info)
        return;
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Rename Context"),
                                               tr("Name (empty for none):"), QLineEdit::Normal,
                                               info->name, &ok);
    if (!ok)
        return;
    // The tree follows through contextChanged, as it does for renames through the API.
    QPointer<WorkbenchWindow> self(this);
    m_engine.renameContext(workspace, id, name.trimmed(), [self](Result<core::ContextInfo> r) {
        if (self && !r)
            self->statusBar()->showMessage(tr("Cannot rename: %1").arg(r.error().message), 8000);
    });
}

void WorkbenchWindow::deleteCurrent(bool confirm)
{
    if (m_contextId.isEmpty())
        return;
    const QString workspace = m_workspace, id = m_contextId;
    const auto info = m_engine.context(workspace, id);
    const QString name = info ? ContextTree::displayName(*info) : id;
    if (confirm
        && !this->confirm(QStringLiteral("confirmDelete"), tr("Delete Context"),
                          tr("Delete \"%1\"? Its interpreter stops, and its history and its "
                             "untitled buffer are deleted.").arg(name),
                          tr("Delete"), &WorkbenchSettings::askBeforeDelete))
        return;
    QPointer<WorkbenchWindow> self(this);
    m_engine.removeContext(workspace, id, [self](Result<void> r) {
        if (self && !r)
            self->statusBar()->showMessage(tr("Cannot delete: %1").arg(r.error().message), 8000);
    });
}

void WorkbenchWindow::requestCompletion()
{
    if (m_contextId.isEmpty())
        return;
    const QString workspace = m_workspace, id = m_contextId;
    QPointer<CodeEditor> target(editor());
    const QString text = target->text();
    const int cursor = target->cursorCharacterOffset();
    QPointer<WorkbenchWindow> self(this);
    m_engine.complete(workspace, id, text, cursor,
                      [self, target, id, cursor, text](Result<QJsonObject> reply) {
        if (!self || !target || self->m_contextId != id || self->editor() != target || target->text() != text)
            return;  // the user moved on
        if (!reply) {
            self->statusBar()->showMessage(tr("No completion: %1").arg(reply.error().message), 4000);
            return;
        }
        QStringList matches;
        for (const QJsonValue &m : reply->value(QLatin1String("matches")).toArray())
            matches << m.toString();
        const int start = reply->value(QLatin1String("cursor_start")).toInt(cursor);
        target->showCompletions(matches, cursor - start);
    });
}

void WorkbenchWindow::openFile(const QString &path)
{
    if (CodeEditor *open = m_tabs->fileEditor(path)) {
        m_tabs->setCurrentWidget(open);
        open->setFocus();
        return;
    }
    const Result<QByteArray> text = readForEditor(path);
    if (!text) {
        statusBar()->showMessage(tr("Cannot open %1: %2").arg(path, text.error().message), 8000);
        return;
    }
    const QString language = languageForFile(path);
    const QString name = QFileInfo(path).fileName();
    CodeEditor *opened = m_tabs->openFileTab(path, QString::fromUtf8(*text), language.isEmpty() ? QString()
                                                                                                 : lexerFor(language));
    updateEditorTitle();
    opened->setFocus();
    QPointer<WorkbenchWindow> self(this);
    QPointer<CodeEditor> tab(opened);
    contextForLanguage(language, [self, tab, name, language](const QString &contextId) {
        if (!self || !tab)
            return;
        if (!contextId.isEmpty()) {
            self->m_tabs->bind(tab, self->m_workspace, contextId);
            self->m_tree->selectContext(contextId);
            self->statusBar()->showMessage(tr("Opened %1; Ctrl+Enter runs it in its context.").arg(name), 5000);
        } else if (!language.isEmpty()) {
            self->statusBar()->showMessage(tr("Opened %1; it has no %2 context to run in yet.").arg(name, language),
                                           8000);
        } else {
            self->statusBar()->showMessage(tr("Opened %1.").arg(name), 5000);
        }
        self->updateEditorTitle();
    });
}

void WorkbenchWindow::contextForLanguage(const QString &language, std::function<void(const QString &)> then)
{
    if (language.isEmpty()) {
        then(QString());
        return;
    }
    if (!m_contextId.isEmpty() && m_contextLanguage == language) {
        then(m_contextId);
        return;
    }
    if (const QList<core::ContextInfo> same = m_engine.contexts(m_workspace, language); !same.isEmpty()) {
        const auto latest = std::max_element(same.begin(), same.end(), [](const auto &a, const auto &b) {
            return a.lastUsedAt < b.lastUsedAt;
        });
        then(latest->id);
        return;
    }
    QMessageBox box(QMessageBox::Question, tr("Open File"),
                    tr("No %1 context runs files like this one yet. Create one for it?").arg(language),
                    QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("offerContext"));
    QPushButton *create = box.addButton(tr("Create a %1 Context").arg(language), QMessageBox::AcceptRole);
    box.setDefaultButton(create);
    box.exec();
    if (box.clickedButton() != create) {
        then(QString());
        return;
    }
    core::CreateContextRequest request;
    request.workspace = m_workspace;
    request.language = language;
    QPointer<WorkbenchWindow> self(this);
    m_engine.createContext(request, [self, then](Result<core::ContextInfo> created) {
        if (!self)
            return;
        if (!created) {
            self->statusBar()->showMessage(tr("Cannot create the context: %1").arg(created.error().message), 10000);
            return;
        }
        self->m_tree->addContext(*created);
        then(created->id);
    });
}

bool WorkbenchWindow::saveCurrent()
{
    CodeEditor *current = editor();
    if (current->filePath().isEmpty()) {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save As"), m_files->root());
        return !path.isEmpty() && saveCurrentAs(path);
    }
    return saveCurrentAs(QString());
}

bool WorkbenchWindow::saveCurrentAs(const QString &path)
{
    CodeEditor *current = editor();
    QString error;
    if (!m_tabs->save(current, path, &error)) {
        statusBar()->showMessage(tr("Cannot save %1: %2").arg(path.isEmpty() ? current->filePath() : path, error),
                                 10000);
        return false;
    }
    if (const QString language = languageForFile(current->filePath()); !language.isEmpty())
        current->setLexerHint(lexerFor(language));
    statusBar()->showMessage(tr("Saved %1.").arg(current->filePath()), 5000);
    updateEditorTitle();
    return true;
}

void WorkbenchWindow::saveFullOutput(const QString &executionId)
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Full Output"),
                                                      QStringLiteral("output-%1.txt").arg(executionId.left(8)));
    if (path.isEmpty())
        return;
    QPointer<WorkbenchWindow> self(this);
    m_engine.executionEvents(executionId, [self, path](Result<QList<Event>> events) {
        if (!self)
            return;
        if (!events) {
            self->statusBar()->showMessage(tr("Cannot read the output: %1").arg(events.error().message), 8000);
            return;
        }
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly)) {
            self->statusBar()->showMessage(tr("Cannot write %1: %2").arg(path, file.errorString()), 8000);
            return;
        }
        for (const Event &event : std::as_const(*events)) {
            if (event.kind == Event::Kind::Stream)
                file.write(event.fields.value(QLatin1String("text")).toString().toUtf8());
        }
        if (!file.commit())
            self->statusBar()->showMessage(tr("Cannot write %1: %2").arg(path, file.errorString()), 8000);
        else
            self->statusBar()->showMessage(tr("Saved the output to %1.").arg(path), 5000);
    });
}

void WorkbenchWindow::showPlugins()
{
    if (!m_pluginsDialog)
        m_pluginsDialog = new PluginsDialog(m_engine, this);
    m_pluginsDialog->reload();
    m_pluginsDialog->show();
    m_pluginsDialog->raise();
    m_pluginsDialog->activateWindow();
}

PluginsDialog *WorkbenchWindow::pluginsDialog() const
{
    return m_pluginsDialog.data();
}

void WorkbenchWindow::showShortcuts()
{
    ShortcutsDialog dialog(m_actions, this);
    dialog.exec();
}

void WorkbenchWindow::showPreferences()
{
    PreferencesDialog dialog(m_prefs, m_engine.availableLanguages(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    applyPreferences(dialog.settings());
    m_prefs.save(*m_settings);
}

void WorkbenchWindow::applyPreferences(const WorkbenchSettings &prefs)
{
    const bool themeChanged = prefs.theme != m_prefs.theme;
    m_prefs = prefs;
    if (themeChanged)
        Themes::apply(prefs.theme);
    m_tabs->setEditorFont(prefs.editorFont);
    m_tabs->setViewOptions(prefs.wordWrap, prefs.showWhitespace);
    for (CodeEditor *each : m_tabs->editors())
        each->applyPalette();
    m_output->setOutputFont(prefs.outputFont);
    m_history->setOutputFont(prefs.outputFont);
    renderTranscript();
    m_history->refresh();
    m_env->setContext(m_workspace, m_contextId);
    if (!m_server->isRunning())
        m_server->setPort(prefs.serverPort);
}

int WorkbenchWindow::busyContexts() const
{
    const QList<core::ContextInfo> contexts = m_engine.allContexts();
    return int(std::count_if(contexts.cbegin(), contexts.cend(), [](const core::ContextInfo &info) {
        return info.state == QLatin1String("busy") || info.queued > 0;
    }));
}

void WorkbenchWindow::closeWithoutAsking()
{
    m_closeUnasked = true;
    close();
}

void WorkbenchWindow::changeEvent(QEvent *event)
{
    QMainWindow::changeEvent(event);
    if (event->type() == QEvent::ActivationChange && isActiveWindow() && m_engine.isAttached()) {
        m_engine.refresh();
        m_history->refresh();
    }
}

void WorkbenchWindow::closeEvent(QCloseEvent *event)
{
    if (m_options.confirmCloseWhileRunning && !m_closeUnasked) {
        if (const int busy = busyContexts(); busy > 0) {
            QMessageBox box(QMessageBox::Question, tr("Quit replhost"),
                            tr("Code is still running in %n context(s).", nullptr, busy),
                            QMessageBox::Cancel, this);
            box.setObjectName(QStringLiteral("quitWhileRunning"));
            box.setInformativeText(tr("Quitting interrupts it; the history records the runs as "
                                      "interrupted."));
            QPushButton *quit = box.addButton(tr("Quit"), QMessageBox::DestructiveRole);
            box.setDefaultButton(QMessageBox::Cancel);
            box.exec();
            if (box.clickedButton() != quit) {
                event->ignore();
                return;
            }
        }
    }
    if (!m_closeUnasked && !m_tabs->confirmCloseAll()) {
        event->ignore();
        return;
    }
    m_tabs->saveState();
    m_prefs.windowGeometry = saveGeometry();
    m_prefs.windowState = saveState();
    m_prefs.save(*m_settings);
    QMainWindow::closeEvent(event);
}

} // namespace replhost::gui
