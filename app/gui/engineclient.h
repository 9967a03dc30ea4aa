// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/backgroundoutput.h"
#include "core/contextmanager.h"
#include "core/execution.h"
#include "core/pluginregistry.h"
#include "core/workspacemanager.h"  // its default workspace name
#include "core/workspacesettings.h"
#include "storage/records.h"

#include <replhost/sdk/result.h>

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace replhost::core { class Engine; }

namespace replhost::gui {

// The one engine the workbench talks to: the engine in this process (InProcessEngine), or a
// replhost-server that holds the data directory, over its HTTP API (HttpEngine).
//
// Values are the engine's own types (ContextInfo, storage records, sdk::Event): they are plain
// data, and an Execution is the run as a face sees it (its events so far and a signal for each
// new one), which a client fills from a stream as the engine fills it from a worker.
//
// Queries without a reply answer from what the client knows now: for the in-process engine the
// engine itself, for a remote one what the server last said (kept up to date by the client's
// own requests and their answers). Everything that may wait for the engine takes a reply; the
// reply is called exactly once, on the GUI thread, possibly before the call returns (the
// in-process engine answers at once), and never after the client is destroyed. Callers guard
// their own lifetime (QPointer) in the reply.
//
// Ownership: owned by whoever made the window (main, a test); it must outlive the widgets that
// use it. GUI thread only.
class EngineClient : public QObject {
    Q_OBJECT
public:
    template<typename T>
    using Reply = std::function<void(Result<T>)>;

    using QObject::QObject;
    ~EngineClient() override = default;

    // The data directory the engine works on.
    virtual QString dataDir() const = 0;
    // Where the engine runs, for the title bar: "in this process", "replhost-server on
    // 127.0.0.1:PORT (pid N)".
    virtual QString description() const = 0;
    // Whether the engine is another process's, reached over its API.
    virtual bool isAttached() const = 0;
    // The engine, when it is in this process (for what only it can do: serving its API); null
    // when attached.
    virtual core::Engine *localEngine() const { return nullptr; }
    // Reads again what the queries answer from, in case a change was not announced (a remote
    // engine's announcements come over a stream, which may have dropped some); the differences
    // come as the signals below. The in-process engine misses nothing: nothing to do.
    virtual void refresh() {}

    // What the engine offers.
    virtual QList<core::PluginEntry> plugins() const = 0;
    virtual QList<core::PluginSearchDir> pluginSearchDirs() const = 0;
    virtual QStringList availableLanguages() const = 0;
    virtual QList<storage::WorkspaceRecord> workspaces() const = 0;
    virtual std::optional<storage::WorkspaceRecord> workspace(const QString &name) const = 0;
    // Contexts of a workspace (of one language when given), every context, one context.
    virtual QList<core::ContextInfo> contexts(const QString &workspace, const QString &language = {}) const = 0;
    virtual QList<core::ContextInfo> allContexts() const = 0;
    virtual std::optional<core::ContextInfo> context(const QString &workspace, const QString &id) const = 0;

    virtual void createContext(const core::CreateContextRequest &request, Reply<core::ContextInfo> reply) = 0;
    virtual void renameContext(const QString &workspace, const QString &id, const QString &name,
                               Reply<core::ContextInfo> reply) = 0;
    virtual void restartContext(const QString &workspace, const QString &id, Reply<void> reply) = 0;
    virtual void removeContext(const QString &workspace, const QString &id, Reply<void> reply) = 0;
    virtual void interrupt(const QString &workspace, const QString &id, Reply<void> reply) = 0;

    // Starts a run. The execution comes back (and executionStarted announces it) once the
    // engine has taken it; its events then arrive live.
    virtual void run(const core::RunRequest &request, Reply<core::ExecutionPtr> reply) = 0;
    virtual void answerInput(const QString &executionId, const QString &value, bool eof,
                             Reply<void> reply) = 0;
    // A run that this client follows (started here or announced by executionStarted); null when
    // it follows none of that id.
    virtual core::ExecutionPtr followedExecution(const QString &executionId) const = 0;
    // Every event of one execution, live or from the history.
    virtual void executionEvents(const QString &executionId, Reply<QList<sdk::Event>> reply) = 0;
    // A context's newest `limit` runs, newest first, the running one included.
    virtual void history(const QString &workspace, const QString &contextId, int limit,
                         Reply<QList<storage::ExecutionRecord>> reply) = 0;
    virtual void backgroundOutput(const QString &workspace, const QString &contextId,
                                  Reply<QList<core::BackgroundOutput::Entry>> reply) = 0;

    virtual void complete(const QString &workspace, const QString &id, const QString &code, int cursor,
                          Reply<QJsonObject> reply) = 0;
    virtual void variables(const QString &workspace, const QString &id, Reply<QJsonObject> reply) = 0;

    // Env layers: the workspace's, the context's (an empty id), and the environment the
    // context's next run gets.
    virtual void envLayer(const QString &workspace, const QString &contextId,
                          Reply<QList<storage::EnvVarRecord>> reply) = 0;
    virtual void changeEnvLayer(const QString &workspace, const QString &contextId,
                                const QMap<QString, QString> &set, const QStringList &unset,
                                const QStringList &clear, Reply<void> reply) = 0;
    virtual void effectiveEnv(const QString &workspace, const QString &contextId,
                              Reply<QMap<QString, QString>> reply) = 0;

    // A workspace's effective settings: the engine's defaults with the workspace's own choices
    // over them (docs/http-api.md, "Workspace settings").
    virtual void workspaceSettings(const QString &workspace, Reply<core::WorkspaceSettings> reply) = 0;
    // Changes the workspace's own settings by JSON Merge Patch (null gives a field back to the
    // default) and answers the effective settings after it. A refused value changes nothing;
    // the error's message names the field ("limits.memory_bytes").
    virtual void changeWorkspaceSettings(const QString &workspace, const QJsonObject &patch,
                                         Reply<core::WorkspaceSettings> reply) = 0;

signals:
    void contextAdded(const replhost::core::ContextInfo &context);
    void contextChanged(const replhost::core::ContextInfo &context);
    void contextRemoved(const QString &workspace, const QString &id);
    void workspaceAdded(const QString &name);
    void workspaceRemoved(const QString &name);
    // A run started anywhere (here, or through the engine's API where the client can see it).
    void executionStarted(replhost::core::ExecutionPtr execution);
    void backgroundOutputAdded(const QString &workspace, const QString &contextId,
                               const replhost::core::BackgroundOutput::Entry &entry);
    // The engine cannot be reached any more (a remote one went away), with why; said once until
    // it answers again.
    void connectionLost(const QString &why);
};

} // namespace replhost::gui
