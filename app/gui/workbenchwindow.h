// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"
#include "workbenchoptions.h"
#include "workbenchsettings.h"

#include <QElapsedTimer>
#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <memory>

class QDockWidget;
class QLabel;
class QSettings;

namespace replhost::gui {

class CodeEditor;
class ContextTree;
class EditorTabs;
class EnvPanel;
class FileBrowser;
class FindBar;
class InputLine;
class HistoryPanel;
class OutputView;
class PlotsPanel;
class PluginsDialog;
class ServerPanel;
class VariablesPanel;

// The workbench: contexts and files on the left, the editor's tabs over the output in the
// middle, variables, plots, history, env layers and the HTTP server on the right. Each tab is a file or a context's
// untitled buffer, bound to the context its code runs in; switching tabs selects that context,
// and selecting a context shows its buffer. The open tabs come back at the next start. Every action has a shortcut (see the
// help dialog, F1). Executions started anywhere — here or through the HTTP API — appear live in
// their context through EngineClient::executionStarted.
//
// The window talks to one EngineClient: the engine in this process, or a replhost-server that
// holds the data directory (the title says which). It never waits for a worker or the network:
// it starts runs, interrupts and restarts through the client's replies and renders what the
// signals report.
//
// Ownership: the engine client must outlive the window; the window owns its widgets, its
// settings and (through the server panel) the embedded ApiServer. GUI thread only.
class WorkbenchWindow : public QMainWindow {
    Q_OBJECT
public:
    // Executions kept per context for the transcript when switching back to it.
    static constexpr int kTranscriptKept = 20;

    WorkbenchWindow(EngineClient &engine, WorkbenchOptions options = {}, QWidget *parent = nullptr);
    ~WorkbenchWindow() override;

    // Creates a context, selects it, then calls `then`. Returns false when the engine refused at
    // once (the status bar says why); a remote engine's refusal comes later, in the status bar.
    bool createContext(const core::CreateContextRequest &request, std::function<void()> then = {});
    // Runs `code` in the current tab's context, else the selected one (creating a
    // default-language context when there is none); its output streams into the view. The
    // execution is returned when the engine took it at once (the engine in this process), else
    // null: lastExecution() is the run once the engine has answered.
    core::ExecutionPtr runCode(const QString &code);
    // The run units of the current tab: the cell under the cursor or the selection (runEditor,
    // Ctrl+Enter); the same, then the cursor goes to the next cell (Shift+Enter); the line or the
    // selection, then the next line (F9); the whole text (F5); and a restart before it.
    void runEditor();
    void runCellAndAdvance();
    void runLine();
    void runAll();
    void restartAndRunAll();
    void interruptCurrent();
    // Restart and delete ask first (with "Don't ask again", kept in the preferences); a restart
    // writes a "restarted" line into the output.
    // False when nothing was restarted (refused, or the user said no); `then` follows the
    // restart.
    bool restartCurrent(std::function<void()> then = {});
    // Asks for a new name for the selected context.
    void renameCurrent();
    void deleteCurrent(bool confirm = true);
    // Opens a file in a tab of its own (or shows the tab it is in), bound to a context of the
    // file's language: the selected one, else the latest of that language, else one it offers
    // to create. Files of no known language are bound to no context.
    void openFile(const QString &path);
    // Saves the current tab (a buffer asks for a file name); saveCurrentAs writes it to `path`
    // and makes the tab that file. False when nothing was written.
    bool saveCurrent();
    bool saveCurrentAs(const QString &path);
    void showPlugins();
    void showShortcuts();
    void showPreferences();
    // Closes the window without the question confirmCloseWhileRunning asks (a termination
    // signal, for instance, is not a person who could answer it).
    void closeWithoutAsking();

    QString currentWorkspace() const { return m_workspace; }
    QString currentContextId() const { return m_contextId; }
    core::ExecutionPtr lastExecution() const { return m_lastExecution; }
    QString runStatusText() const;

    ContextTree *contextTree() const { return m_tree; }
    // The current tab's editor (there is always one).
    CodeEditor *editor() const;
    EditorTabs *editorTabs() const { return m_tabs; }
    FindBar *findBar() const { return m_find; }
    OutputView *output() const { return m_output; }
    HistoryPanel *history() const { return m_history; }
    EnvPanel *envPanel() const { return m_env; }
    ServerPanel *serverPanel() const { return m_server; }
    VariablesPanel *variablesPanel() const { return m_variables; }
    PlotsPanel *plotsPanel() const { return m_plots; }
    FileBrowser *fileBrowser() const { return m_files; }
    PluginsDialog *pluginsDialog() const;  // null until showPlugins()
    // Every action, for the help dialog and for tests (by objectName).
    QList<QAction *> allActions() const { return m_actions; }
    QAction *action(const QString &objectName) const;

    const WorkbenchSettings &preferences() const { return m_prefs; }
    void applyPreferences(const WorkbenchSettings &prefs);

protected:
    void closeEvent(QCloseEvent *event) override;
    // Coming back to the window reads an attached engine's contexts and the history again:
    // what other clients of the server did meanwhile shows then.
    void changeEvent(QEvent *event) override;

private:
    void buildWidgets();
    void buildActions();
    QAction *addAction(const QString &name, const QString &text, const QList<QKeySequence> &keys,
                       const QString &tip, std::function<void()> slot);
    QDockWidget *addDock(const QString &name, const QString &title, QWidget *widget,
                         Qt::DockWidgetArea area);
    void onContextSelected(const QString &workspace, const QString &contextId);
    void onEditorChanged(CodeEditor *editor);
    void restoreSession();
    void updateEditorTitle();
    // Whether to go on with a restart or delete: asks unless "Don't ask again" was ticked.
    bool confirm(const QString &objectName, const QString &title, const QString &text,
                 const QString &button, bool WorkbenchSettings::*ask);
    // A context of `language` for a file, given to `then`: the selected one, the latest one, or
    // a new one the user agrees to. Empty id: none.
    void contextForLanguage(const QString &language, std::function<void(const QString &contextId)> then);
    void onContextCreated(const core::ContextInfo &created);
    core::ExecutionPtr startRun(const QString &code);
    void onContextChanged(const core::ContextInfo &info);
    void onExecutionStarted(const core::ExecutionPtr &execution);
    void onBackgroundOutput(const QString &workspace, const QString &contextId,
                            const core::BackgroundOutput::Entry &entry);
    void onExecutionFinished(const core::ExecutionPtr &execution);
    void followForStatus(const core::ExecutionPtr &execution);
    // Re-renders the selected context's transcript (after a theme or font change, since the
    // view's colours are baked into its document).
    void renderTranscript();
    void renderTranscript(const QList<core::BackgroundOutput::Entry> &backgroundOutput);
    void updateRunStatus();
    void updateActions();
    void updateServerStatus();
    void requestCompletion();
    void saveFullOutput(const QString &executionId);
    void focusDock(QDockWidget *dock, QWidget *widget);
    QString lexerFor(const QString &language) const;
    QString languageForFile(const QString &path) const;

    // Contexts with a run going or waiting.
    int busyContexts() const;

    EngineClient &m_engine;
    WorkbenchOptions m_options;
    bool m_closeUnasked = false;
    bool m_runRefused = false;  // the last runCode() was refused before it returned
    std::unique_ptr<QSettings> m_settings;
    WorkbenchSettings m_prefs;

    QString m_workspace, m_contextId, m_contextState, m_contextLanguage;
    QHash<QString, QList<core::ExecutionPtr>> m_transcripts;  // recent executions per context
    // Restarts from this window per context: the id of the execution each came after (empty:
    // before any in the transcript), for the "restarted" lines when the transcript is redrawn.
    QHash<QString, QStringList> m_restartsAfter;
    bool m_restoringSession = false;
    core::ExecutionPtr m_lastExecution;  // the latest execution of the selected context
    QElapsedTimer m_runClock;
    QTimer m_statusTicker;

    ContextTree *m_tree = nullptr;
    FileBrowser *m_files = nullptr;
    EditorTabs *m_tabs = nullptr;
    FindBar *m_find = nullptr;
    OutputView *m_output = nullptr;
    InputLine *m_input = nullptr;  // under the output: where a run's question is answered
    HistoryPanel *m_history = nullptr;
    EnvPanel *m_env = nullptr;
    ServerPanel *m_server = nullptr;
    VariablesPanel *m_variables = nullptr;
    PlotsPanel *m_plots = nullptr;
    QLabel *m_editorTitle = nullptr;
    QLabel *m_runStatus = nullptr;
    QLabel *m_serverStatus = nullptr;
    QDockWidget *m_contextsDock = nullptr, *m_filesDock = nullptr, *m_historyDock = nullptr,
                *m_envDock = nullptr, *m_serverDock = nullptr, *m_variablesDock = nullptr,
                *m_plotsDock = nullptr;
    QPointer<PluginsDialog> m_pluginsDialog;
    QList<QAction *> m_actions;
};

} // namespace replhost::gui
