// SPDX-License-Identifier: Apache-2.0
// replhost: the desktop workbench over the engine, with the HTTP API available from its server
// panel; or, when a replhost-server holds the data directory, over that server's engine.

#include "guioptions.h"
#include "signalwatcher.h"

#include "core/engine.h"
#include "gui/workbenchengine.h"
#include "gui/workbenchsettings.h"
#include "gui/workbenchwindow.h"

#include <replhost/sdk/version.h>

#include <QApplication>
#include <QEventLoop>
#include <QIcon>
#include <QMessageBox>
#include <QPointer>
#include <QSettings>
#include <QTextStream>

#include <cstdio>
#include <optional>

#include <sys/stat.h>

using namespace replhost;

namespace {

// Says why the workbench cannot start, in a dialog that a termination signal closes too: the
// dialog's own event loop is not QApplication::exec(), so QApplication::quit() would not end
// it, and SIGTERM would leave the process waiting for a click nobody will make.
int showStartError(app::SignalWatcher &watcher, const QString &message)
{
    QMessageBox box(QMessageBox::Critical, QStringLiteral("replhost"),
                    QStringLiteral("replhost cannot start: %1").arg(message), QMessageBox::Ok);
    QObject::connect(&watcher, &app::SignalWatcher::terminationRequested, &box,
                     [&box] { box.done(QMessageBox::Cancel); });
    box.exec();
    return 1;
}

} // namespace

int main(int argc, char *argv[])
{
    // Before anything is written: the data directory, the database, its WAL, the token and every
    // other file this process creates are its user's alone (0700 directories, 0600 files).
    ::umask(077);
    // Parsed before QApplication exists, so --help and --version work without a display.
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << QString::fromLocal8Bit(argv[i]);
    const app::GuiOptions options = app::GuiOptions::parse(arguments);
    QTextStream out(stdout);
    QTextStream err(stderr);
    switch (options.action) {
    case app::GuiOptions::Action::ShowHelp:
        out << "Usage: replhost [options]\n" << options.helpText.section(QLatin1Char('\n'), 1);
        return 0;
    case app::GuiOptions::Action::ShowVersion:
        out << "replhost " << core::Engine::appVersion() << '\n'
            << "SDK " << REPLHOST_SDK_VERSION_STRING << '\n'
            << "worker protocol " << sdk::kWorkerProtocolVersion << '\n'
            << "database schema " << core::Engine::schemaVersion() << '\n';
        return 0;
    case app::GuiOptions::Action::Fail:
        err << "replhost: " << options.error << "\nTry 'replhost --help'.\n";
        return 2;
    case app::GuiOptions::Action::Run:
        break;
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("replhost"));
    QApplication::setApplicationName(QStringLiteral("replhost"));
    QApplication::setApplicationDisplayName(QStringLiteral("replhost"));
    QApplication::setApplicationVersion(core::Engine::appVersion());
    // The installed desktop entry and icon (packaging/) carry this name; the desktop matches
    // the window to them through it.
    QApplication::setDesktopFileName(QStringLiteral("org.replhost.replhost"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("org.replhost.replhost")));

    // SIGTERM or SIGINT close the window like Quit does, so the workers are stopped and the
    // history flushed below instead of the process just vanishing.
    QPointer<gui::WorkbenchWindow> shown;  // a signal is nobody who could answer a question
    app::SignalWatcher watcher;
    QObject::connect(&watcher, &app::SignalWatcher::terminationRequested, &app, [&shown] {
        if (shown)
            shown->closeWithoutAsking();
        QApplication::quit();
    });

    // Taken out of the environment before the engine exists, so no worker ever inherits it.
    const QByteArray tokenOverride = qgetenv("REPLHOST_TOKEN");
    qunsetenv("REPLHOST_TOKEN");

    core::EngineConfig engineConfig;
    engineConfig.dataDir = options.dataDir;
    engineConfig.pluginPaths = options.pluginPaths;
    // Its own engine, or the one of the server that holds the data directory (a wait for the
    // server's answers, which a termination signal ends too).
    std::optional<Result<gui::WorkbenchEngine>> opened;
    QEventLoop opening;
    QObject::connect(&watcher, &app::SignalWatcher::terminationRequested, &opening, [&opening] { opening.quit(); });
    gui::WorkbenchEngine::open(engineConfig, tokenOverride, [&opened, &opening](Result<gui::WorkbenchEngine> outcome) {
        opened = std::move(outcome);
        opening.quit();
    });
    if (!opened)
        opening.exec();
    if (!opened)
        return 1;  // ended by a signal before the server answered
    if (!*opened) {
        err << "replhost: " << opened->error().message << '\n';
        err.flush();
        return showStartError(watcher, opened->error().message);
    }
    std::unique_ptr<core::Engine> engine = std::move((*opened)->engine);
    std::unique_ptr<gui::EngineClient> client = std::move((*opened)->client);
    opened.reset();
    if (client->isAttached())
        out << "replhost: attached to " << client->description() << '\n' << Qt::flush;

    gui::WorkbenchOptions windowOptions;
    windowOptions.tokenOverride = tokenOverride;
    if (options.serve) {
        if (options.servePort) {
            windowOptions.servePort = options.servePort;
        } else {
            auto settings = gui::WorkbenchSettings::open(QString());
            windowOptions.servePort = gui::WorkbenchSettings::load(*settings).serverPort;
        }
    }
    windowOptions.confirmCloseWhileRunning = true;
    auto window = std::make_unique<gui::WorkbenchWindow>(*client, windowOptions);
    shown = window.get();
    window->show();
    const int status = QApplication::exec();

    // The window (and the server it holds) first, then the workers, then the engine (history
    // flushed, lock released). An attached workbench leaves the server's engine as it is.
    window.reset();
    client.reset();
    if (!engine)
        return status;
    engine->contexts().shutdownAll(core::ContextManager::kExitGrace);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    engine.reset();
    return status;
}
