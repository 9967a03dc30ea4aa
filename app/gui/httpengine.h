// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QPair>
#include <QUrl>

#include <deque>
#include <memory>

class QNetworkAccessManager;
class QNetworkReply;

namespace replhost::gui {

// Where the replhost-server that holds a data directory listens, as its files in the data
// directory say: server.json ({"url", "pid"}, written while it runs) and token. The same rule as
// replhost-cli's ServerLocator: a URL file whose pid no longer runs is stale and never used.
struct ServerEndpoint {
    QUrl url;
    qint64 pid = 0;
    QByteArray token;
    QString holder;  // the program that holds the directory ("replhost-server", "replhost")

    // Errors: "not_found" (no server.json: no server runs for the directory), "stale" (its
    // process is gone), "io" or "bad_request" (unreadable or malformed files).
    static Result<ServerEndpoint> inDataDir(const QString &dataDir, const QByteArray &tokenOverride = {});
};

// A replhost-server's engine behind the workbench's EngineClient, over its native HTTP API v1
// (docs/http-api.md). Nothing here blocks: every request is a QNetworkReply whose answer calls
// the reply, and a run follows its execution's event stream (Server-Sent Events) as the events
// arrive, filling a core::Execution as the engine would.
//
// What the client knows without asking (plugins, workspaces, contexts) is what connect() read
// and what later answers said, kept up to date by the server's own stream of its events
// (GET /v1/events), which the client reads while it is attached: contexts other clients
// created, changed, renamed, restarted or deleted, runs they started (each followed through its
// own event stream, GET /v1/executions/{id}/events, as a run of this client is) and background
// output come as the signals the engine in this process would give. After the stream's ready
// (also when it reconnects, with backoff, after it dropped) and its resync (events were dropped
// for want of reading them fast enough), the workspaces and contexts are read again (refresh()).
//
// A run's stream that breaks before its end is resumed where it broke (Last-Event-ID), a few
// times with backoff; only when that fails is the connection reported lost. A run announced by
// the server while this client waits for the first message of a run it started itself is
// held until that message came, so that the client's own run is not taken for another's.
//
// Ownership: replies and executions' streams are children of this object, and no reply is
// called after it is destroyed. GUI thread only.
class HttpEngine : public EngineClient {
    Q_OBJECT
public:
    // Executions kept for followedExecution() once they have finished.
    static constexpr int kFinishedKept = 64;
    // The most runs the server lists in one page of a context's history.
    static constexpr int kHistoryPage = 500;
    // A broken run stream is resumed this many times without an event in between, after
    // kResumeFirstMs, then twice as long each time.
    static constexpr int kResumeAttempts = 5;
    static constexpr int kResumeFirstMs = 100;
    // The engine's event stream is opened again after kReconnectFirstMs, then twice as long
    // each time it fails, up to kReconnectMaxMs.
    static constexpr int kReconnectFirstMs = 100;
    static constexpr int kReconnectMaxMs = 10000;

    HttpEngine(ServerEndpoint endpoint, QString dataDir, QObject *parent = nullptr);
    ~HttpEngine() override;

    // Reads the plugins, the workspaces and their contexts; `done` is called once with the
    // outcome (an error names the server and what failed). Call once, before anything else.
    void connectToServer(std::function<void(Result<void>)> done);

    const ServerEndpoint &endpoint() const { return m_endpoint; }

    QString dataDir() const override { return m_dataDir; }
    QString description() const override;
    bool isAttached() const override { return true; }
    void refresh() override;

    QList<core::PluginEntry> plugins() const override { return m_plugins; }
    QList<core::PluginSearchDir> pluginSearchDirs() const override { return m_searchDirs; }
    QStringList availableLanguages() const override;
    QList<storage::WorkspaceRecord> workspaces() const override { return m_workspaces; }
    std::optional<storage::WorkspaceRecord> workspace(const QString &name) const override;
    QList<core::ContextInfo> contexts(const QString &workspace, const QString &language = {}) const override;
    QList<core::ContextInfo> allContexts() const override { return m_contexts; }
    std::optional<core::ContextInfo> context(const QString &workspace, const QString &id) const override;

    void createContext(const core::CreateContextRequest &request, Reply<core::ContextInfo> reply) override;
    void renameContext(const QString &workspace, const QString &id, const QString &name,
                       Reply<core::ContextInfo> reply) override;
    void restartContext(const QString &workspace, const QString &id, Reply<void> reply) override;
    void removeContext(const QString &workspace, const QString &id, Reply<void> reply) override;
    void interrupt(const QString &workspace, const QString &id, Reply<void> reply) override;

    void run(const core::RunRequest &request, Reply<core::ExecutionPtr> reply) override;
    void answerInput(const QString &executionId, const QString &value, bool eof, Reply<void> reply) override;
    core::ExecutionPtr followedExecution(const QString &executionId) const override;
    void executionEvents(const QString &executionId, Reply<QList<sdk::Event>> reply) override;
    void history(const QString &workspace, const QString &contextId, int limit,
                 Reply<QList<storage::ExecutionRecord>> reply) override;
    void backgroundOutput(const QString &workspace, const QString &contextId,
                          Reply<QList<core::BackgroundOutput::Entry>> reply) override;

    void complete(const QString &workspace, const QString &id, const QString &code, int cursor,
                  Reply<QJsonObject> reply) override;
    void variables(const QString &workspace, const QString &id, Reply<QJsonObject> reply) override;

    void envLayer(const QString &workspace, const QString &contextId,
                  Reply<QList<storage::EnvVarRecord>> reply) override;
    void changeEnvLayer(const QString &workspace, const QString &contextId, const QMap<QString, QString> &set,
                        const QStringList &unset, const QStringList &clear, Reply<void> reply) override;
    void effectiveEnv(const QString &workspace, const QString &contextId,
                      Reply<QMap<QString, QString>> reply) override;
    void workspaceSettings(const QString &workspace, Reply<core::WorkspaceSettings> reply) override;
    void changeWorkspaceSettings(const QString &workspace, const QJsonObject &patch,
                                 Reply<core::WorkspaceSettings> reply) override;

private:
    class EventStream;
    struct Follow;
    using FollowPtr = std::shared_ptr<Follow>;
    using JsonReply = std::function<void(Result<QJsonDocument>)>;

    // `path` below /v1/workspaces/{ws} (empty workspace: the default one).
    QString workspacePath(const QString &workspace, const QString &path) const;
    using RawHeaders = QList<QPair<QByteArray, QByteArray>>;
    // `manager`: the one the request goes through (default: m_streams for a run, else m_network).
    QNetworkReply *send(const QByteArray &verb, const QString &path, const QJsonObject *body = nullptr,
                        const RawHeaders &headers = {}, QNetworkAccessManager *manager = nullptr);
    // Sends and calls `answer` with the JSON body of a 2xx answer (null for 204), else the error
    // the server (or the network) gave.
    void request(const QByteArray &verb, const QString &path, const QJsonObject *body, JsonReply answer);
    // Takes in the Workspace the server answered and replies with its effective settings.
    void replyWorkspaceSettings(Result<QJsonDocument> json, const Reply<core::WorkspaceSettings> &reply);
    void requestContext(const QByteArray &verb, const QString &path, const QJsonObject *body,
                        Reply<core::ContextInfo> reply);
    struct Listing {
        QList<storage::WorkspaceRecord> workspaces;
        QList<core::ContextInfo> contexts;
    };
    void readWorkspacesAndContexts(std::function<void(Result<Listing>)> done);
    void readContexts(int workspaceIndex, Listing listing, std::function<void(Result<Listing>)> done);
    // Appends to `records` the context's runs older than `before` (empty: from the newest)
    // until there are `limit` of them or no more, then replies with them.
    void historyPage(const QString &workspace, const QString &contextId, int limit, const QString &before,
                     QList<storage::ExecutionRecord> records, Reply<QList<storage::ExecutionRecord>> reply);
    // Takes in a context the server described: cached, and announced as added or changed.
    core::ContextInfo remember(const core::ContextInfo &info);
    void forget(const QString &workspace, const QString &id);
    void refreshContext(const QString &workspace, const QString &id);
    void keepFinished(const core::ExecutionPtr &execution);
    // The server cannot be reached (a request found nobody, or a run's stream broke).
    void noteLost(const QString &why);

    // Following runs: one event of a followed run's stream (`id` its SSE id), which ends the
    // follow when it is the done; the stream of a run from after the last event taken in; what
    // is done when it breaks.
    void takeEvent(const FollowPtr &follow, const QString &id, const QJsonObject &json);
    void openRunStream(const FollowPtr &follow);
    void runStreamEnded(const FollowPtr &follow, const Result<void> &ended);
    void resume(const FollowPtr &follow, const QString &why);
    void endFollow(const FollowPtr &follow);
    // Ends a run that no stream follows with the done of the engine's execution_finished.
    void finishFromNotice(const FollowPtr &follow);

    // The engine's event stream.
    void subscribe();
    void takeEngineEvent(const QByteArray &type, const QJsonObject &json);
    // A run the server announced: followed unless it is this client's own or already followed.
    void runAnnounced(const QJsonObject &summary);
    // Announcements held while this client's own runs had not said which they are.
    void settleHeldAnnouncements();

    ServerEndpoint m_endpoint;
    QString m_dataDir;
    QNetworkAccessManager *m_network;  // requests
    QNetworkAccessManager *m_streams;  // the event streams of this client's runs
    QNetworkAccessManager *m_watch;    // the engine's event stream, and other clients' runs
    QList<core::PluginEntry> m_plugins;
    QList<core::PluginSearchDir> m_searchDirs;
    QList<storage::WorkspaceRecord> m_workspaces;
    QList<core::ContextInfo> m_contexts;  // oldest first, as the server lists them
    QHash<QString, FollowPtr> m_running;        // followed and not finished, by id
    std::deque<core::ExecutionPtr> m_finished;  // the most recent finished ones
    bool m_lost = false;      // connectionLost was said, and the server has not answered since
    quint64 m_refreshes = 0;  // refresh() calls: only the last one's answer is taken in
    int m_runsUnnamed = 0;    // runs this client started whose stream has not said which they are
    QList<QJsonObject> m_heldAnnouncements;  // execution_started summaries held meanwhile
    int m_reconnectMs = kReconnectFirstMs;
};

} // namespace replhost::gui
