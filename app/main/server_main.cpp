// SPDX-License-Identifier: Apache-2.0
// replhost-server: the engine and its HTTP API, without the workbench.

#include "rememberedport.h"
#include "serverbanner.h"
#include "serveroptions.h"
#include "signalwatcher.h"

#include "core/engine.h"
#include "http/apiserver.h"
#include "http/e2bapi.h"
#include "http/serverurlfile.h"
#include "http/tokenstore.h"

#include <replhost/sdk/version.h>

#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>

#include <sys/stat.h>
#include <unistd.h>

using namespace replhost;


int main(int argc, char *argv[])
{
    // Before anything is written: the data directory, the database, its WAL, the token and every
    // other file this process creates are its user's alone (0700 directories, 0600 files).
    ::umask(077);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("replhost-server"));
    QCoreApplication::setApplicationVersion(core::Engine::appVersion());
    QTextStream out(stdout);
    QTextStream err(stderr);

    const app::ServerOptions options = app::ServerOptions::parse(QCoreApplication::arguments());
    switch (options.action) {
    case app::ServerOptions::Action::ShowHelp:
        out << options.helpText;
        return 0;
    case app::ServerOptions::Action::ShowVersion:
        out << "replhost-server " << core::Engine::appVersion() << '\n'
            << "SDK " << REPLHOST_SDK_VERSION_STRING << '\n'
            << "worker protocol " << sdk::kWorkerProtocolVersion << '\n'
            << "database schema " << core::Engine::schemaVersion() << '\n';
        return 0;
    case app::ServerOptions::Action::Fail:
        err << "replhost-server: " << options.error << "\nTry 'replhost-server --help'.\n";
        return 2;
    case app::ServerOptions::Action::Serve:
        break;
    }

    // Installed before anything is announced: a SIGTERM that arrives while the engine opens is
    // kept in the watcher's pipe and ends the event loop as soon as it runs.
    app::SignalWatcher watcher;
    if (!watcher.isValid())
        err << "replhost-server: warning: cannot watch SIGINT/SIGTERM; stop with SIGKILL\n";
    QObject::connect(&watcher, &app::SignalWatcher::terminationRequested, &app, [&err](int number) {
        err << "replhost-server: signal " << number << ", stopping\n";
        err.flush();
        QCoreApplication::quit();
    });

    // Taken out of the environment before the engine exists, so no worker ever inherits it.
    const QByteArray tokenOverride = qgetenv("REPLHOST_TOKEN");
    qunsetenv("REPLHOST_TOKEN");

    core::EngineConfig engineConfig;
    engineConfig.dataDir = options.dataDir;
    engineConfig.pluginPaths = options.pluginPaths;
    engineConfig.workspaceDefaults = options.workspaceDefaults;
    engineConfig.maxResidentWorkers = options.maxResidentWorkers;
    if (options.workerIdleTimeoutMs >= 0)
        engineConfig.workerIdleTimeoutMs = options.workerIdleTimeoutMs;
    if (options.warmPoolSize >= 0)
        engineConfig.warmPoolSize = options.warmPoolSize;
    engineConfig.warmPoolSizes = options.warmPoolSizes;
    engineConfig.bwrapPath = options.bwrapPath;
    Result<std::unique_ptr<core::Engine>> opened = core::Engine::open(engineConfig);
    if (!opened) {
        err << "replhost-server: " << opened.error().message << '\n';
        return 1;
    }
    std::unique_ptr<core::Engine> engine = std::move(*opened);

    const Result<http::TokenStore::Token> token =
            options.tokenFile.isEmpty() ? http::TokenStore::load(engine->dataDir(), tokenOverride)
                                        : http::TokenStore::loadFile(options.tokenFile);
    if (!token) {
        err << "replhost-server: " << token.error().message << '\n';
        return 1;
    }
    if (!token->warning.isEmpty())
        err << "replhost-server: warning: " << token->warning << '\n';

    if (!options.server.e2bWorkspace.isEmpty()) {
        if (const Result<void> prepared = http::E2bApi::prepareWorkspace(*engine, options.server.e2bWorkspace);
            !prepared) {
            err << "replhost-server: --e2b-workspace: " << prepared.error().message << '\n';
            return 1;
        }
    }

    http::ApiServerConfig serverConfig = options.server;
    serverConfig.token = token->value;
    const quint16 remembered = options.portAuto ? app::RememberedPort::read(engine->dataDir()) : 0;
    if (options.portAuto)
        serverConfig.port = remembered;
    auto server = std::make_unique<http::ApiServer>(*engine, serverConfig);
    Result<void> listening = server->listen();
    if (!listening && remembered != 0) {
        // Taken since (another user's server, any program): a free one, remembered instead.
        err << "replhost-server: port " << remembered << ", this data directory's last, is not "
            << "free (" << listening.error().message << "); taking a free one\n";
        err.flush();
        serverConfig.port = 0;
        server = std::make_unique<http::ApiServer>(*engine, serverConfig);
        listening = server->listen();
    }
    if (!listening) {
        err << "replhost-server: " << listening.error().message << '\n';
        return 1;
    }
    if (options.portAuto && server->port() != remembered) {
        if (const Result<void> kept = app::RememberedPort::write(engine->dataDir(), server->port()); !kept)
            err << "replhost-server: warning: " << kept.error().message << "; the next start takes another port\n";
    }
    if (!server->address().isLoopback()) {
        err << "replhost-server: warning: listening on " << server->address().toString()
            << ", which is not a loopback address: anyone who can reach it and knows the token "
               "can run code as this user\n";
        err.flush();
    }
    // How replhost-cli finds this server; written before the banner, so whoever reads the banner
    // finds the file too.
    http::ServerUrlFile urlFile(engine->dataDir());
    if (const Result<void> written = urlFile.write(server->baseUrl(), QCoreApplication::applicationPid()); !written)
        err << "replhost-server: warning: " << written.error().message << "; clients need --url\n";
    // The token only to a terminal: a unit's stdout is the journal, a log file is read by others.
    const app::ServerBanner banner(server->baseUrl(), *token, engine->dataDir(), ::isatty(STDOUT_FILENO) == 1);
    banner.print(out);
    out << banner.e2bLine(http::E2bApi::capabilityPrefix()) << '\n';
    out.flush();

    // The token-less E2B listener, only when asked for, and only on loopback.
    std::unique_ptr<http::ApiServer> e2bServer;
    if (options.e2bPort >= 0) {
        http::ApiServerConfig e2bConfig = options.server;
        e2bConfig.address = QHostAddress(QHostAddress::LocalHost);
        e2bConfig.port = quint16(options.e2bPort);
        e2bConfig.token.clear();
        e2bConfig.e2bOnly = true;
        e2bServer = std::make_unique<http::ApiServer>(*engine, e2bConfig);
        if (const Result<void> listening = e2bServer->listen(); !listening) {
            err << "replhost-server: " << listening.error().message << '\n';
            return 1;
        }
        out << "E2B API without a token at " << e2bServer->baseUrl()
            << "  (any local process can run code through it)\n";
        out.flush();
    }

    const int status = QCoreApplication::exec();
    urlFile.remove();  // before the data dir is released to whichever server comes next

    // No new connections; then end the running commands and executions (executions interrupted,
    // with a grace to end as interrupted runs do), so their streams get their last events and
    // the history records them; let those answers reach the clients; then close the server and
    // the engine (history flushed, lock released).
    server->stopListening();
    if (e2bServer)
        e2bServer->stopListening();
    engine->commands().shutdownAll();
    engine->contexts().shutdownAll(core::ContextManager::kExitGrace);
    server->flush(1000);
    if (e2bServer)
        e2bServer->flush(500);
    e2bServer.reset();
    server.reset();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    engine.reset();
    return status;
}
