// SPDX-License-Identifier: Apache-2.0
// Drives the workbench through its main states on a real display and saves what the screen
// shows: an empty workbench, a run with output and a figure, an error, the plugins page, the
// server panel and the dark theme. The editor's tabs (files, cells with their bands), the find
// bar, rich results (a chart, a DataFrame's table, an updating display) and the Variables and
// Plots panels are rendered from the window itself at 1400×900 and 1000×700, the two sizes the
// layout must hold.
//
//   xvfb-run -s '-screen 0 1400x900x24' build/bin/workbench_screenshots docs/screenshots
#include "core/engine.h"
#include "gui/codeeditor.h"
#include "gui/contexttree.h"
#include "gui/inprocessengine.h"
#include "gui/editortabs.h"
#include "gui/findbar.h"
#include "gui/inputline.h"
#include "gui/outputview.h"
#include "gui/pluginsdialog.h"
#include "gui/serverpanel.h"
#include "gui/workbenchwindow.h"
#include "gui/workspacesettingsdialog.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QJsonObject>
#include <QLineEdit>
#include <QMainWindow>
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

// The window alone, rendered at each size the layout must hold.
void render(QMainWindow &window, const QString &directory, const QString &name)
{
    const QSize before = window.size();
    const QByteArray layout = window.saveState();  // the docks' widths, which a narrow size takes
    for (const QSize size : {QSize(1400, 900), QSize(1000, 700)}) {
        window.resize(size);
        QTest::qWait(400);
        const QString path = QDir(directory).filePath(
                QStringLiteral("%1-%2x%3.png").arg(name).arg(size.width()).arg(size.height()));
        if (!window.grab().save(path))
            std::fprintf(stderr, "cannot save %s\n", qPrintable(path));
        else
            std::printf("%s\n", qPrintable(path));
    }
    window.resize(before);
    window.restoreState(layout);
}

bool writeFile(const QString &path, const QByteArray &text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
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
    gui::InProcessEngine client(*engine);
    auto window = std::make_unique<gui::WorkbenchWindow>(client, options);
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

    // Files in tabs, one with cells; its second cell run with Shift+Enter's action.
    const QString workspaceDir = engine->workspaces().get(QStringLiteral("default"))->directory;
    const QString script = QDir(workspaceDir).filePath(QStringLiteral("analysis.py"));
    const QString notes = QDir(workspaceDir).filePath(QStringLiteral("notes.txt"));
    writeFile(notes, "Questions for Friday:\n- does the mean hold with 300 samples?\n");
    writeFile(script, "# %% Load\nimport math\nvalues = [math.sin(x / 3) for x in range(30)]\n\n"
                      "# %% Summarise\nmean = sum(values) / len(values)\n"
                      "print(f\"mean {mean:.3f} over {len(values)} values\")\n\n"
                      "# %% Extremes\nprint('max', round(max(values), 3), 'min', round(min(values), 3))\n");
    window->openFile(notes);
    window->openFile(script);
    window->runCellAndAdvance();
    window->runCellAndAdvance();
    if (!QTest::qWaitFor([&] { return window->lastExecution() && window->lastExecution()->isFinished(); }, 60000))
        std::fprintf(stderr, "the cells did not finish\n");
    window->editor()->setCursorPosition(5, 0);
    window->editor()->insert(QStringLiteral("# the mean of one period of sin is about 0\n"));
    render(*window, out, QStringLiteral("files-and-cells"));

    window->findBar()->showReplace();
    window->findBar()->findField()->setText(QStringLiteral("values"));
    window->findBar()->replaceField()->setText(QStringLiteral("samples"));
    window->editor()->setCursorPosition(0, 0);
    window->findBar()->findNext();
    window->findBar()->findNext();
    render(*window, out, QStringLiteral("find"));
    window->findBar()->closeBar();

    window->showPlugins();
    if (gui::PluginsDialog *dialog = window->pluginsDialog()) {
        dialog->move(screen.center() - dialog->rect().center());
        shoot(out, QStringLiteral("plugins"));
        dialog->close();
    }

    {
        gui::WorkspaceSettingsDialog dialog(client, QStringLiteral("default"), window.get());
        dialog.show();
        dialog.move(screen.center() - dialog.rect().center());
        shoot(out, QStringLiteral("workspace-settings"));
    }

    // Rich results in a context of their own, and the panels that list what it holds.
    const QString analysisId = window->currentContextId();
    request.name = QStringLiteral("report");
    window->createContext(request);
    run(*window, QStringLiteral(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots(figsize=(9, 3.2))\n"
            "ax.bar(['Mon', 'Tue', 'Wed', 'Thu', 'Fri'], [12, 19, 7, 15, 22], color='#4C72B0')\n"
            "ax.set_title('Orders per day')\nax.set_ylabel('orders')\nplt.show()"));
    render(*window, out, QStringLiteral("chart"));
    run(*window, QStringLiteral(
            "import pandas as pd\n"
            "sales = pd.DataFrame({'region': ['north', 'south', 'east', 'west'],\n"
            "                      'orders': [120, 87, 143, 66],\n"
            "                      'revenue': [10450.5, 7320.0, 12980.25, 5120.75],\n"
            "                      'updated': pd.to_datetime(['2026-11-30', '2026-12-01', '2026-12-01', '2026-11-29'])})\n"
            "sales"));
    render(*window, out, QStringLiteral("dataframe"));
    // Shot while it runs: the display shows the step it was last updated to.
    window->editor()->setText(QStringLiteral(
            "from IPython.display import display, HTML, Markdown\nimport time\n"
            "status = display(HTML('<b>loading 0 of 4 files…</b>'), display_id=True)\n"
            "print('each step updates the line above in place')\n"
            "for n in range(1, 5):\n    time.sleep(1.5)\n"
            "    status.update(HTML(f'<b>loading {n} of 4 files…</b> ' + '█' * n + '░' * (4 - n)))\n"
            "status.update(Markdown('**done**: 4 files'))"));
    window->runEditor();
    const core::ExecutionPtr updating = window->lastExecution();
    if (!QTest::qWaitFor([&] { return window->output()->toPlainText().contains(QStringLiteral("loading 2 of 4")); }, 60000))
        std::fprintf(stderr, "the display was not updated\n");
    render(*window, out, QStringLiteral("update"));
    if (!updating || !QTest::qWaitFor([&] { return updating->isFinished(); }, 60000))
        std::fprintf(stderr, "the updating run did not finish\n");
    // A question of the run, answered in the line under the output.
    window->editor()->setText(QStringLiteral(
            "reviewer = input('Who reviews these figures? ')\n"
            "print(f'Thanks, {reviewer}: the report is yours.')"));
    window->runEditor();
    const core::ExecutionPtr asking = window->lastExecution();
    auto *inputLine = window->findChild<gui::InputLine *>();
    if (!inputLine || !QTest::qWaitFor([&] { return inputLine->isVisible(); }, 60000)) {
        std::fprintf(stderr, "the run did not ask for input\n");
    } else {
        auto *field = inputLine->findChild<QLineEdit *>();
        field->setText(QStringLiteral("Ada"));
        render(*window, out, QStringLiteral("input"));
        QTest::keyClick(field, Qt::Key_Return);
    }
    if (!asking || !QTest::qWaitFor([&] { return asking->isFinished(); }, 60000))
        std::fprintf(stderr, "the run that asked did not finish\n");
    run(*window, QStringLiteral(
            "import numpy as np\nfig, ax = plt.subplots(figsize=(5, 3))\n"
            "ax.scatter(sales['orders'], sales['revenue'])\nax.set_title('Revenue by orders')\nplt.show()\n"
            "weights = np.linspace(0, 1, 12)\nregions = list(sales['region'])\nthreshold = 100"));
    if (auto *dock = window->findChild<QDockWidget *>(QStringLiteral("variablesDock")))
        dock->raise();
    render(*window, out, QStringLiteral("variables"));
    if (auto *dock = window->findChild<QDockWidget *>(QStringLiteral("plotsDock")))
        dock->raise();
    render(*window, out, QStringLiteral("plots"));
    window->contextTree()->selectContext(analysisId);

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
