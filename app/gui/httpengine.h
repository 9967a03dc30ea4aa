// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QUrl>

#include <deque>

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
// and what later answers said: each change the client makes comes back with the context's new
// state, a context is read again when one of its runs that the client follows starts or ends,
// and refresh() reads the workspaces and contexts again (what other clients created, renamed
// or deleted). Runs that other clients of the server start are not announced (the server has
// no stream of them); they show in a context's history.
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
    using JsonReply = std::function<void(Result<QJsonDocument>)>;

    // `path` below /v1/workspaces/{ws} (empty workspace: the default one).
    QString workspacePath(const QString &workspace, const QString &path) const;
    QNetworkReply *send(const QByteArray &verb, const QString &path, const QJsonObject *body = nullptr);
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

    ServerEndpoint m_endpoint;
    QString m_dataDir;
    QNetworkAccessManager *m_network;  // requests
    QNetworkAccessManager *m_streams;  // event streams
    QList<core::PluginEntry> m_plugins;
    QList<core::PluginSearchDir> m_searchDirs;
    QList<storage::WorkspaceRecord> m_workspaces;
    QList<core::ContextInfo> m_contexts;  // oldest first, as the server lists them
    QHash<QString, core::ExecutionPtr> m_running;  // followed and not finished, by id
    std::deque<core::ExecutionPtr> m_finished;     // the most recent finished ones
    bool m_lost = false;
    quint64 m_refreshes = 0;  // refresh() calls: only the last one's answer is taken in  // connectionLost was said, and the server has not answered since
};

} // namespace replhost::gui
