// SPDX-License-Identifier: Apache-2.0
// Drives the workbench through its main states on a real display and saves what the screen
// shows: an empty workbench, a run with output and a figure, an error, the plugins page, the
// server panel and the dark theme.
//
//   xvfb-run -s '-screen 0 1400x900x24' build/bin/workbench_screenshots docs/screenshots
#include "core/engine.h"
#include "gui/codeeditor.h"
#include "gui/contexttree.h"
#include "gui/pluginsdialog.h"
#include "gui/serverpanel.h"
#include "gui/workbenchwindow.h"
#include "gui/workspacesettingsdialog.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QJsonObject>
#include <QScreen>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>

using namespace replhost;

namespace {

void shoot(const QString &directory, const QString &name)
{
    QTest::qWait(400);  // let layouts, images and repaints settle
    const QPixmap pixmap = QGuiApplication::primaryScreen()->grabWindow(0);
    const QString path = QDir(directory).filePath(name + QStringLiteral(".png"));
    if (!pixmap.save(path))
        std::fprintf(stderr, "cannot save %s\n", qPrintable(path));
    else
        std::printf("%s\n", qPrintable(path));
}

bool run(gui::WorkbenchWindow &window, const QString &code)
{
    window.editor()->setText(code);
    window.editor()->setFocus();
    // The action itself, not a key press: without a window manager the window may never become
    // active, and shortcuts only reach active windows (tst_workbench covers the keys).
    window.runEditor();
    const core::ExecutionPtr execution = window.lastExecution();
    return execution && QTest::qWaitFor([&] { return execution->isFinished(); }, 60000);
}

} // namespace

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    const QString out = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral(".");
    QDir().mkpath(out);
    QTemporaryDir data;
    const QString fixtures = QStringLiteral(REPLHOST_TEST_FIXTURE_DIR);
    core::EngineConfig config;
    config.dataDir = data.path();
    // The system Python, which has matplotlib, whatever python3 comes first on PATH.
    config.languageSettings = QJsonObject{
            {QStringLiteral("python"), QJsonObject{{QStringLiteral("interpreter"), QStringLiteral("/usr/bin/python3")}}}};
    config.pluginPaths = {fixtures + QStringLiteral("/fixture_ghost"), fixtures + QStringLiteral("/fixture_no_id"),
                          fixtures + QStringLiteral("/not_a_library")};
    auto opened = core::Engine::open(config);
    if (!opened) {
        std::fprintf(stderr, "%s\n", qPrintable(opened.error().message));
        return 1;
    }
    std::unique_ptr<core::Engine> engine = std::move(*opened);
    gui::WorkbenchOptions options;
    options.settingsFile = QDir(data.path()).filePath(QStringLiteral("workbench.ini"));
    auto window = std::make_unique<gui::WorkbenchWindow>(*engine, options);
    const QRect screen = QGuiApplication::primaryScreen()->geometry();
    window->setGeometry(screen);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get()))
        return 1;
    shoot(out, QStringLiteral("empty"));

    core::CreateContextRequest request;
    request.language = QStringLiteral("python");
    request.name = QStringLiteral("analysis");
    window->createContext(request);
    run(*window, QStringLiteral("import sys, math\nprint('squares:', [n * n for n in range(8)])\n"
                                "print('careful: this goes to stderr', file=sys.stderr)\n"
                                "{'pi': round(math.pi, 4), 'e': round(math.e, 4)}"));
    run(*window, QStringLiteral(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "import numpy as np\nx = np.linspace(0, 4 * np.pi, 400)\n"
            "fig, ax = plt.subplots(figsize=(6, 3))\nax.plot(x, np.sin(x), label='sin')\n"
            "ax.plot(x, np.cos(x) * np.exp(-x / 8), label='damped cos')\nax.legend()\n"
            "ax.set_title('A figure from the context')\nplt.show()"));
    shoot(out, QStringLiteral("run"));

    run(*window, QStringLiteral("def mean(values):\n    return sum(values) / len(values)\n\nmean([])"));
    shoot(out, QStringLiteral("error"));

    window->showPlugins();
    if (gui::PluginsDialog *dialog = window->pluginsDialog()) {
        dialog->move(screen.center() - dialog->rect().center());
        shoot(out, QStringLiteral("plugins"));
        dialog->close();
    }

    {
        gui::WorkspaceSettingsDialog dialog(*engine, QStringLiteral("default"), window.get());
        dialog.show();
        dialog.move(screen.center() - dialog.rect().center());
        shoot(out, QStringLiteral("workspace-settings"));
    }

    window->serverPanel()->start(0);
    if (auto *dock = window->findChild<QDockWidget *>(QStringLiteral("serverDock")))
        dock->raise();
    shoot(out, QStringLiteral("server"));

    gui::WorkbenchSettings prefs = window->preferences();
    prefs.theme = QStringLiteral("dark");
    window->applyPreferences(prefs);
    if (auto *dock = window->findChild<QDockWidget *>(QStringLiteral("historyDock")))
        dock->raise();
    shoot(out, QStringLiteral("dark"));

    window.reset();
    engine->contexts().shutdownAll();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    engine.reset();
    return 0;
}
