// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "backgroundoutput.h"
#include "execution.h"
#include "envlayers.h"
#include "sandboxsupport.h"
#include "storage/records.h"

#include <replhost/sdk/result.h>

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

#include <chrono>
#include <functional>
#include <memory>

namespace replhost::storage { class Store; class HistoryWriter; }

namespace replhost::core {

class CommitBarrier;
class Context;
class PluginRegistry;
class ResidencyLimiter;
class WarmPool;
class WorkspaceManager;

using ExecutionPtr = std::shared_ptr<Execution>;

// A snapshot of a context for the faces.
struct ContextInfo {
    QString id;
    QString workspace;     // workspace name
    QString language;      // handler id
    QString name;
    QString cwd;
    // "starting", "restoring" (replaying its history before the next run), "idle", "busy",
    // "dormant" (no worker; the next use restores it), "dead" (worker gone; a new one starts on
    // the next run).
    QString state;
    bool resident = false; // a worker runs for it (starting, restoring, idle or busy)
    QString restore;       // restore policy: "replay" or "fresh"
    int executionCount = 0;
    int queued = 0;        // executions waiting behind the running one
    qint64 pid = 0;
    qint64 createdAt = 0;
    qint64 lastUsedAt = 0;
    QString languageVersion;
    // How it last came back from dormancy (the "restored" event's fields: mode, replayed, lost,
    // duration_ms, ...); empty when it has not been restored since the engine started.
    QJsonObject lastRestore;

    // The Context document of the HTTP API (docs/http-api.md), and back: fromJson reads what
    // toJson wrote (times as ISO 8601, null as absent), so a client of the API holds the same
    // value the engine had. Fields it lacks keep their defaults.
    QJsonObject toJson() const;
    static ContextInfo fromJson(const QJsonObject &json);
};

struct CreateContextRequest {
    QString workspace;     // empty = "default"
    QString language;      // id or alias
    QString cwd;           // empty = workspace directory; relative = inside it
    QString name;
    QMap<QString, QString> env;  // initial context env layer
    // When its worker is gone (host restart, eviction): "replay" (empty: the default) rebuilds
    // the state by replaying the successful executions; "fresh" starts an empty interpreter.
    QString restore;
};

struct RunRequest {
    QString workspace;     // empty = "default"
    QString contextId;     // run in this context, or
    QString language;      // in this language's default context (the oldest; created on first use)
    QString code;
    QMap<QString, QString> env;  // execution layer: for this run only
    QStringList envUnset;        // execution layer: removed for this run only
    // 0 = none; on expiry the interrupt ladder runs, status "timeout". At most the workspace's
    // limits.timeout_ms: no timeout or a longer one gets that limit.
    int timeoutMs = 0;
    // false: a restore never runs this execution again (its side effects happen once).
    bool replay = true;
    // The client can answer the run's questions (ContextManager::answerInput): code that reads
    // input then waits for an answer (an input_request event). false: it finds the end of input
    // at once, so that a client that cannot answer never waits.
    bool input = false;
};

// Contexts: live, stateful interpreters, each in a workspace, with their own env layer, cwd and
// execution queue. Runs in one context execute one at a time in FIFO order; different contexts
// run in parallel. Every event of every execution is forwarded to subscribers (executionStarted
// gives the Execution; connect to its signals) and persisted through the HistoryWriter. An
// execution's done (and executionFinished) comes only once its history is durable
// (CommitBarrier): a client told that a run finished finds it after a crash.
//
// Errors (Error::code): "bad_request", "not_found", "unknown_language", "unavailable",
// "limit_reached" (creating a context, the default one of run() by language included, in a
// workspace that has limits.max_contexts of them already).
//
// The workspace's settings bound what it runs: limits.max_contexts its contexts, and each
// execution gets limits.timeout_ms (see RunRequest::timeoutMs) and limits.output_bytes as they
// are when it is queued.
// Threading: engine thread only. Store, writer, registry and workspaces are owned by the Engine
// and outlive this object.
class ContextManager : public QObject {
    Q_OBJECT
public:
    ContextManager(storage::Store *store, storage::HistoryWriter *writer,
                   PluginRegistry *plugins, WorkspaceManager *workspaces,
                   QJsonObject languageSettings, int finishedExecutionsKept,
                   QObject *parent = nullptr);
    ~ContextManager() override;

    // Loads the contexts kept in storage (their workers start on first use).
    Result<void> load();
    // Loads the stored contexts of one workspace that are not loaded yet, dormant: those an
    // import wrote (WorkspaceArchive::restore). Each is announced (contextAdded).
    Result<void> load(const storage::WorkspaceRecord &workspace);

    Result<ContextInfo> create(const CreateContextRequest &request);
    Result<ContextInfo> get(const QString &workspace, const QString &id) const;
    // Every context of every workspace, in no particular order.
    QList<ContextInfo> all() const;
    // Oldest first; `language` filters by handler id or alias when non-empty.
    Result<QList<ContextInfo>> list(const QString &workspace, const QString &language = {}) const;
    // Kills the worker's whole process group; queued executions end "aborted".
    Result<void> remove(const QString &workspace, const QString &id);
    // A display name: at most 200 characters, no control characters; empty = unnamed.
    Result<ContextInfo> rename(const QString &workspace, const QString &id, const QString &name);
    // A fresh interpreter with the same id, cwd and env layer; queued executions end "aborted".
    Result<ContextInfo> restart(const QString &workspace, const QString &id);
    // Interrupts the running execution of the context (if any) and drops its queue.
    Result<void> interrupt(const QString &workspace, const QString &id);
    // What the context's interpreter wrote while none of its runs was going on, numbered above
    // `afterSeq`, oldest first, at most `limit` entries (see BackgroundOutput). Error "not_found".
    struct BackgroundPage {
        QList<BackgroundOutput::Entry> entries;
        qint64 lastSeq = 0;
        qint64 dropped = 0;
    };
    Result<BackgroundPage> backgroundOutput(const QString &workspace, const QString &id,
                                            qint64 afterSeq, int limit) const;

    Result<ExecutionPtr> run(const RunRequest &request);
    // A live or recently finished execution. Error "not_found".
    Result<ExecutionPtr> execution(const QString &executionId) const;
    Result<void> interruptExecution(const QString &executionId);
    // Answers the question a running execution waits for (its input_request event): `value` is
    // the line, without its line end, or with `eof` the end of input. The answer becomes an
    // "input_reply" event of the execution, {value} or, for a password, {password: true} alone:
    // a password is never stored or shown. Errors: "not_found"; "conflict" when the execution
    // has finished or does not wait for input (it never asked, or was answered already);
    // "payload_too_large" for a value over kMaxInputChars.
    Result<void> answerInput(const QString &executionId, const QString &value, bool eof);
    static constexpr qsizetype kMaxInputChars = 1024 * 1024;
    // Like execution(), and when the execution is no longer in memory, the finished execution
    // read back from the history (status, timing and the events that were kept), so a client can
    // still fetch it or replay its stream. Error "not_found", "storage".
    Result<ExecutionPtr> lookupExecution(const QString &executionId);
    // The context's execution history, newest first: at most `limit` executions whose seq is
    // below `beforeSeq` (from the newest when beforeSeq <= 0), the running one included.
    // Errors: "not_found" (context), "storage".
    Result<QList<storage::ExecutionRecord>> history(const QString &workspace, const QString &id,
                                                    qint64 beforeSeq, int limit);

    // The context env layer; same rules as WorkspaceManager::changeEnv.
    Result<QList<storage::EnvVarRecord>> env(const QString &workspace, const QString &id) const;
    Result<void> changeEnv(const QString &workspace, const QString &id,
                           const QMap<QString, QString> &set, const QStringList &unset,
                           const QStringList &clear);
    // The environment the next run of the context sees (base → workspace → context).
    Result<QMap<QString, QString>> effectiveEnv(const QString &workspace, const QString &id) const;

    // Completion and variables, answered by the context's interpreter.
    using Reply = std::function<void(Result<QJsonObject>)>;
    void complete(const QString &workspace, const QString &id, const QString &code, int cursor,
                  Reply reply);
    void variables(const QString &workspace, const QString &id, Reply reply);

    // Ends all work and stops all workers, for a clean exit. From the call on, run(), create()
    // and restart() refuse with "unavailable". Queued executions end "aborted"; running ones are
    // interrupted and have until `grace` to end as interrupted runs do, their last output and
    // done recorded (the event loop runs meanwhile); whatever still runs then is aborted and its
    // worker killed. A zero grace aborts at once.
    void shutdownAll(std::chrono::milliseconds grace = std::chrono::milliseconds(0));
    // The grace the server and the workbench give running executions at exit: two SIGINTs of
    // the interrupt ladder (protocol section 7), which ends a run that handles the first.
    static constexpr std::chrono::milliseconds kExitGrace{2000};

    // About how many bytes of its most recent events each execution keeps in memory (at least
    // its newest event); older events are read back from the history when a client asks for
    // them (Execution::eventRange). Applies to executions created from now on. Until called:
    // kDefaultEventWindowBytes.
    static constexpr qint64 kDefaultEventWindowBytes = 2 * 1024 * 1024;
    void setEventWindowBytes(qint64 bytes) { m_eventWindowBytes = std::max<qint64>(0, bytes); }

    // At most `maxResidentWorkers` (>= 1) workers run at once, and a worker idle for
    // `idleTimeoutMs` (0: never) stops; the least recently used idle context is made dormant
    // (see ResidencyLimiter). Until called: 64 workers, no idle timeout.
    void setResidencyLimits(int maxResidentWorkers, int idleTimeoutMs);
    // Makes an idle context dormant now: its worker stops cleanly and its next use restores it.
    // Errors: "not_found", "busy" (running, queued, starting or restoring).
    Result<ContextInfo> evict(const QString &workspace, const QString &id);

    // Keeps `defaultSize` started workers per available language (`perLanguage` overrides by
    // language id; 0 disables) for new, restarted and restored contexts to take; see WarmPool.
    // Until called: no pool.
    void setWarmPoolSizes(int defaultSize, const QMap<QString, int> &perLanguage);
    const WarmPool &warmPool() const { return *m_pool; }

    // Whether workers can be sandboxed (Engine::open probes it). A context in a workspace whose
    // isolation is "sandbox" fails to start, with the reason, while they cannot. Until called:
    // unavailable, with no bwrap.
    void setSandboxSupport(const SandboxSupport &support) { m_sandbox = support; }

signals:
    void contextAdded(const replhost::core::ContextInfo &context);
    void contextChanged(const replhost::core::ContextInfo &context);
    void contextRemoved(const QString &workspace, const QString &id);
    void executionStarted(replhost::core::ExecutionPtr execution);
    // Every execution that ends, however it ends (also those aborted before they started).
    void executionFinished(replhost::core::ExecutionPtr execution);
    // A context's interpreter wrote something while none of its runs was going on.
    void backgroundOutputAdded(const QString &workspace, const QString &contextId,
                               const replhost::core::BackgroundOutput::Entry &entry);
    // A worker started for a context; `restart` when the context had a worker before (it died,
    // was killed to stop a run, or the context was restarted).
    void workerStarted(const QString &language, bool restart);

private:
    friend class Context;
    void removeWorkspaceContexts(const QString &workspaceId);
    Result<Context *> find(const QString &workspace, const QString &id) const;
    // Error "limit_reached" when the workspace has as many contexts as limits.max_contexts.
    Result<void> checkContextLimit(const storage::WorkspaceRecord &workspace) const;
    void remember(const ExecutionPtr &execution);
    // Whether `context` is the default context of its language in its workspace (the oldest):
    // the one run() by language uses.
    bool isDefaultContext(const Context *context) const;
    // Commits what the writer holds and announces the executions it ends, before returning:
    // for calls that end executions and whose callers expect them ended when they return
    // (restart, delete, interrupting queued runs, exit). Blocks for one commit.
    void announceEndedNow();
    // Context::changed, passed on as contextChanged(). A context changes several times per run,
    // so its info is made only when someone listens.
    void announceChange(const Context *context);
    // Reads an execution's events back from the history (committing what is queued first).
    EventArchive historyArchive();
    Result<QList<sdk::Event>> storedEvents(const QString &executionId, int from, int to);
    // SessionOptions::settings for a worker of `language` in the workspace `workspaceId`, for
    // the context `contextId` (empty: not yet bound to one): the language's settings, and the
    // workspace's worker confinement under "confinement" when it has one.
    QJsonObject workerSettings(const QString &language, const QString &workspaceId,
                               const QString &contextId = {}) const;
    // The environment a worker of the workspace starts from, below its env layers: the host's,
    // or in a sandbox the allow-list of WorkerConfinement::baseEnvironment().
    Environment baseEnvironment(const QString &workspaceId) const;
    // Error "unavailable" with the reason when the workspace runs its workers in a sandbox and
    // this machine cannot make one (WorkerConfinement::sandboxRefusal).
    Result<void> checkIsolation(const QString &workspaceId) const;
    // A random prefix drawn once per manager plus a counter: unique across engine runs like a
    // UUID, without a draw from the system RNG on every execution.
    QString nextExecutionId();

    storage::Store *m_store;
    storage::HistoryWriter *m_writer;
    PluginRegistry *m_plugins;
    WorkspaceManager *m_workspaces;
    QJsonObject m_languageSettings;
    int m_finishedKept;
    QHash<QString, Context *> m_contexts;  // owned (QObject children)
    ResidencyLimiter *m_residency = nullptr;  // owned (QObject child)
    CommitBarrier *m_completions = nullptr;   // owned (QObject child)
    WarmPool *m_pool = nullptr;               // owned (QObject child)
    SandboxSupport m_sandbox;
    QHash<QString, ExecutionPtr> m_executions;
    qint64 m_eventWindowBytes = kDefaultEventWindowBytes;
    QList<QString> m_finishedOrder;
    const QString m_executionIdPrefix;
    quint64 m_executionsMade = 0;
    bool m_shuttingDown = false;
};

} // namespace replhost::core
