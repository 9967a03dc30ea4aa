// SPDX-License-Identifier: Apache-2.0
// Rich output of Python cells, run by the real Python driver in a real engine: IPython.display
// where the interpreter has no IPython (Debian's Python in a venv of its own, which sees none of
// Debian's packages) and routed to replhost where it has one (Debian's Python with
// python3-ipython), displays that are updated and cleared, the chart data of matplotlib figures
// (one figure per chart type, built here, its fields compared with E2B's model) and the table
// data of pandas DataFrames.
#include "core/engine.h"
#include "core/executiondocument.h"
#include "executionevents.h"
#include "testengine.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace replhost;
using namespace replhost::core;
using sdk::Event;
using namespace replhost::core::testing;

namespace {

// Long enough for a fresh worker to start (and import matplotlib) on a busy machine.
constexpr int kRunTimeout = 120000;

const QString kChart = QStringLiteral("application/vnd.replhost.chart+json");
const QString kData = QStringLiteral("application/vnd.replhost.data+json");
const QString kDebianPython = QStringLiteral("/usr/bin/python3");

QJsonObject parsed(const char *json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(json), &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("bad expected JSON: %s", qPrintable(error.errorString()));
    return document.object();
}

// The MIME bundles of the run's display and result events, in order.
QList<QJsonObject> bundles(const ExecutionPtr &execution)
{
    QList<QJsonObject> found;
    for (const Event &event : allEvents(execution))
        if (event.kind == Event::Kind::Display || event.kind == Event::Kind::Result)
            found << event.fields.value(QLatin1String("data")).toObject();
    return found;
}

QList<QJsonObject> withMime(const ExecutionPtr &execution, const QString &mime)
{
    QList<QJsonObject> found;
    for (const QJsonObject &bundle : bundles(execution))
        if (bundle.contains(mime))
            found << bundle;
    return found;
}

} // namespace

class RichOutputTest : public QObject {
    Q_OBJECT

private:
    TestEngine m_engine;
    QTemporaryDir m_venvDir;
    QString m_noIPython;    // a Python without IPython: empty when none could be made
    QString m_withIPython;  // Debian's Python with its IPython: empty when it has none
    QString m_interpreter;  // the one the engine runs
    QString m_context;

    // Debian's Python, when it can import all of `modules`.
    static bool debianPythonHas(const QString &modules)
    {
        if (!QFileInfo(kDebianPython).isExecutable())
            return false;
        QProcess probe;
        probe.start(kDebianPython, {QStringLiteral("-c"), QStringLiteral("import ") + modules});
        return probe.waitForFinished(60000) && probe.exitStatus() == QProcess::NormalExit
                && probe.exitCode() == 0;
    }

    // An engine running `interpreter`, with one Python context; reused while the interpreter
    // stays the same.
    bool useInterpreter(const QString &interpreter)
    {
        if (interpreter == m_interpreter && !m_context.isEmpty())
            return true;
        m_context.clear();
        m_interpreter = interpreter;
        if (!m_engine.makeDataDir())
            return false;
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.warmPoolSize = 0;
        config.languageSettings.insert(QStringLiteral("python"),
                                       QJsonObject{{QStringLiteral("interpreter"), interpreter}});
        if (!m_engine.open(config))
            return false;
        CreateContextRequest request;
        request.language = QStringLiteral("python");
        auto created = m_engine->contexts().create(request);
        if (!created) {
            qWarning("cannot create a Python context: %s", qPrintable(created.error().message));
            return false;
        }
        m_context = created->id;
        return true;
    }

    ExecutionPtr run(const QString &code)
    {
        RunRequest request;
        request.contextId = m_context;
        request.code = code;
        return waitForEnd(startRun(m_engine->contexts(), request), kRunTimeout);
    }

    // Runs `code`, which must succeed; null (after a failed check) otherwise.
    ExecutionPtr runOk(const QString &code)
    {
        const ExecutionPtr done = run(code);
        if (!done || done->status() != QLatin1String("ok")) {
            qWarning("%s", qPrintable(describe(done)));
            return nullptr;
        }
        return done;
    }

    // Runs `code` under `interpreter`; it must succeed.
    ExecutionPtr runWith(const QString &interpreter, const QString &code)
    {
        return useInterpreter(interpreter) ? runOk(code) : nullptr;
    }

    // The chart of the only figure `code` shows, with Debian's matplotlib.
    QJsonObject chartOf(const QString &code)
    {
        if (!useInterpreter(m_withIPython))
            return {};
        const ExecutionPtr done = runOk(QStringLiteral("import matplotlib.pyplot as plt\n") + code);
        if (!done)
            return {};
        const QList<QJsonObject> charts = withMime(done, kChart);
        if (charts.size() != 1) {
            qWarning("%lld charts in %s", qlonglong(charts.size()), qPrintable(describe(done)));
            return {};
        }
        if (!charts.first().value(QLatin1String("image/png")).isString())
            qWarning("a chart without its PNG");
        return charts.first().value(kChart).toObject();
    }

    void requireCharts()
    {
        if (m_withIPython.isEmpty() || !debianPythonHas(QStringLiteral("matplotlib")))
            QSKIP("Debian's Python with matplotlib is not installed (scripts/setup installs "
                  "python3-matplotlib)");
    }

    void requirePandas()
    {
        if (m_withIPython.isEmpty() || !debianPythonHas(QStringLiteral("pandas")))
            QSKIP("Debian's Python with pandas is not installed (scripts/setup installs "
                  "python3-pandas)");
    }

    // Both interpreters as rows: the shim's behaviour and the routed IPython's must agree.
    void addInterpreters()
    {
        QTest::addColumn<QString>("interpreter");
        if (!m_noIPython.isEmpty())
            QTest::newRow("without IPython") << m_noIPython;
        if (!m_withIPython.isEmpty())
            QTest::newRow("with IPython") << m_withIPython;
    }

private slots:
    void initTestCase()
    {
        // A venv of Debian's Python sees only the standard library: no IPython, as on a
        // Python without python3-ipython. Made offline: without pip.
        if (QFileInfo(kDebianPython).isExecutable() && m_venvDir.isValid()) {
            QProcess venv;
            venv.start(kDebianPython, {QStringLiteral("-m"), QStringLiteral("venv"),
                                       QStringLiteral("--without-pip"), m_venvDir.path()});
            if (venv.waitForFinished(120000) && venv.exitCode() == 0)
                m_noIPython = m_venvDir.filePath(QStringLiteral("bin/python3"));
            else
                qWarning("no venv: %s", venv.readAllStandardError().constData());
        }
        if (debianPythonHas(QStringLiteral("IPython")))
            m_withIPython = kDebianPython;
        if (m_noIPython.isEmpty() && m_withIPython.isEmpty())
            QSKIP("Debian's Python is not installed (scripts/setup installs python3)");
        QVERIFY2(!m_noIPython.isEmpty(), "Debian's Python cannot make a venv without IPython");
    }

    void cleanupTestCase() { m_engine.reset(); }

    // --- IPython.display ------------------------------------------------------------------

    void ipythonDisplayIsTheShimOnlyWithoutIPython_data() { addInterpreters(); }
    void ipythonDisplayIsTheShimOnlyWithoutIPython()
    {
        QFETCH(QString, interpreter);
        const ExecutionPtr done = runWith(interpreter, QStringLiteral(
                "import IPython.display, IPython.core.display\n"
                "import os\n"
                "print(os.path.basename(IPython.display.__file__).startswith('ipython_display-'))\n"
                "print(IPython.core.display.HTML is IPython.display.HTML)\n"
                "print(IPython.get_ipython())\n"));
        QVERIFY(done);
        const bool shim = interpreter == m_noIPython;
        QCOMPARE(out(done), QStringLiteral("%1\nTrue\nNone\n").arg(shim ? "True" : "False"));
    }

    void displayObjectsShowTheirMimeTypes_data() { addInterpreters(); }
    void displayObjectsShowTheirMimeTypes()
    {
        QFETCH(QString, interpreter);
        const ExecutionPtr done = runWith(interpreter, QStringLiteral(
                "from IPython.display import display, HTML, Markdown, Latex, JSON, SVG, "
                "Javascript, Image\n"
                "import base64\n"
                "png = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
                "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')\n"
                "display(HTML('<b>bold</b>'), Markdown('# Title'), Latex('$x^2$'))\n"
                "display(JSON({'a': [1, 2]}), SVG('<svg xmlns=\"http://www.w3.org/2000/svg\"/>'))\n"
                "display(Javascript('console.log(1)'), Image(png))\n"));
        QVERIFY(done);
        const QList<QJsonObject> shown = bundles(done);
        QCOMPARE(shown.size(), 7);
        QCOMPARE(shown[0].value("text/html").toString(), QStringLiteral("<b>bold</b>"));
        QCOMPARE(shown[1].value("text/markdown").toString(), QStringLiteral("# Title"));
        QCOMPARE(shown[2].value("text/latex").toString(), QStringLiteral("$x^2$"));
        QCOMPARE(shown[3].value("application/json").toObject(), parsed(R"json({"a": [1, 2]})json"));
        QVERIFY(shown[4].value("image/svg+xml").toString().startsWith(QLatin1String("<svg")));
        QCOMPARE(shown[5].value("application/javascript").toString(), QStringLiteral("console.log(1)"));
        const QByteArray png = QByteArray::fromBase64(shown[6].value("image/png").toString().toLatin1());
        QVERIFY(png.startsWith("\x89PNG\r\n\x1a\n"));
        for (const QJsonObject &bundle : shown)
            QVERIFY(bundle.value("text/plain").isString());
    }

    // _repr_*_ methods and _repr_mimebundle_ are what libraries display through; the MIME types
    // of plotly, vega-lite and bokeh pass through as they are.
    void reprMethodsAndLibraryMimeTypesPassThrough_data() { addInterpreters(); }
    void reprMethodsAndLibraryMimeTypesPassThrough()
    {
        QFETCH(QString, interpreter);
        const ExecutionPtr done = runWith(interpreter, QStringLiteral(
                "class Plot:\n"
                "    def _repr_mimebundle_(self, include=None, exclude=None):\n"
                "        return {'application/vnd.plotly.v1+json': {'data': [{'y': [1, 2]}]},\n"
                "                'application/vnd.vegalite.v5+json': {'mark': 'bar'},\n"
                "                'application/vnd.bokehjs_exec.v0+json': '',\n"
                "                'text/plain': 'a plot'}\n"
                "class Page:\n"
                "    def _repr_html_(self):\n"
                "        return '<p>page</p>'\n"
                "class Shows:\n"
                "    def _ipython_display_(self):\n"
                "        display({'text/plain': 'shown by itself'}, raw=True)\n"
                "from IPython.display import display\n"
                "display(Plot(), Shows())\n"
                "Page()\n"));
        QVERIFY(done);
        const QList<QJsonObject> shown = bundles(done);
        QCOMPARE(shown.size(), 3);
        QCOMPARE(shown[0].value("application/vnd.plotly.v1+json").toObject(),
                 parsed(R"json({"data": [{"y": [1, 2]}]})json"));
        QCOMPARE(shown[0].value("application/vnd.vegalite.v5+json").toObject(), parsed(R"json({"mark": "bar"})json"));
        QVERIFY(shown[0].contains("application/vnd.bokehjs_exec.v0+json"));
        QCOMPARE(shown[0].value("text/plain").toString(), QStringLiteral("a plot"));
        QCOMPARE(shown[1].value("text/plain").toString(), QStringLiteral("shown by itself"));
        QCOMPARE(shown[2].value("text/html").toString(), QStringLiteral("<p>page</p>"));
    }

    void displayHandleUpdatesItsDisplay_data() { addInterpreters(); }
    void displayHandleUpdatesItsDisplay()
    {
        QFETCH(QString, interpreter);
        const ExecutionPtr done = runWith(interpreter, QStringLiteral(
                "from IPython.display import display, update_display, DisplayHandle, HTML\n"
                "h = display(HTML('0%'), display_id=True)\n"
                "print(isinstance(h, DisplayHandle))\n"
                "display(HTML('other'))\n"
                "h.update(HTML('50%'))\n"
                "update_display(HTML('100%'), display_id=h.display_id)\n"
                "named = display(HTML('a'), display_id='named')\n"
                "named.display(HTML('b'))\n"));
        QVERIFY(done);
        QCOMPARE(out(done), QStringLiteral("True\n"));
        const QList<Event> displays = eventsOfType(done, QStringLiteral("display"));
        QCOMPARE(displays.size(), 6);
        const QString id = displays[0].fields.value("display_id").toString();
        QVERIFY(!id.isEmpty());
        QVERIFY(!displays[1].fields.contains("display_id"));
        for (int i : {2, 3}) {
            QCOMPARE(displays[i].fields.value("display_id").toString(), id);
            QCOMPARE(displays[i].fields.value("update").toBool(), true);
        }
        // .display() shows the display again, as a display of its own with the same id.
        QCOMPARE(displays[5].fields.value("display_id").toString(), QStringLiteral("named"));
        QVERIFY(!displays[5].fields.contains("update"));
        // The document shows what the run ends with: the updated display where it was.
        const auto document = ExecutionDocument::object(*done);
        QVERIFY(document);
        QStringList html;
        for (const QJsonValue &bundle : document->value("displays").toArray())
            html << bundle.toObject().value("text/html").toString();
        QCOMPARE(html, QStringList({QStringLiteral("100%"), QStringLiteral("other"),
                                    QStringLiteral("a"), QStringLiteral("b")}));
    }

    void clearOutputClearsWhatWasShown_data() { addInterpreters(); }
    void clearOutputClearsWhatWasShown()
    {
        QFETCH(QString, interpreter);
        const ExecutionPtr done = runWith(interpreter, QStringLiteral(
                "from IPython.display import display, clear_output, HTML\n"
                "display(HTML('old'))\n"
                "clear_output()\n"
                "display(HTML('new'))\n"
                "clear_output(wait=True)\n"));
        QVERIFY(done);
        const QList<Event> clears = eventsOfType(done, QStringLiteral("clear_output"));
        QCOMPARE(clears.size(), 2);
        QCOMPARE(clears[0].fields.value("wait").toBool(true), false);
        QCOMPARE(clears[1].fields.value("wait").toBool(), true);
        // Nothing printed: an installed IPython would write a terminal escape outside a shell.
        QCOMPARE(out(done), QString());
        const auto document = ExecutionDocument::object(*done);
        QVERIFY(document);
        const QJsonArray displays = document->value("displays").toArray();
        QCOMPARE(displays.size(), 1);
        QCOMPARE(displays[0].toObject().value("text/html").toString(), QStringLiteral("new"));
    }

    // The shim is read from its source: the driver directory (shared by every worker of the
    // user, possibly read-only) gets no __pycache__.
    void shimWritesNoBytecodeBesideIt()
    {
        const ExecutionPtr done = runWith(m_noIPython, QStringLiteral(
                "import IPython.display, os\n"
                "print(os.path.dirname(IPython.display.__file__))\n"));
        QVERIFY(done);
        const QString directory = out(done).trimmed();
        QVERIFY(QFileInfo(directory).isDir());
        QVERIFY2(!QFileInfo::exists(directory + QStringLiteral("/__pycache__")), qPrintable(directory));
    }

    // --- charts -----------------------------------------------------------------------------

    // One figure per chart type, built here; the chart is compared field for field with E2B's
    // model.
    void figureChartFollowsE2bModel_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QByteArray>("chart");
        QTest::newRow("a line chart: labels, units, ticks and points")
                << QStringLiteral("fig, ax = plt.subplots()\n"
                                  "ax.plot([1, 2, 3], [1, 4, 9], label='squares')\n"
                                  "ax.plot([1, 2, 3], [2, 3, 4])\n"
                                  "ax.set_title('Growth')\n"
                                  "ax.set_xlabel('Time (s)')\n"
                                  "ax.set_ylabel('Distance [m]')\n"
                                  "ax.set_xticks([1, 2, 3])\n"
                                  "ax.set_yticks([0, 5, 10])\n"
                                  "plt.show()\n")
                << QByteArray(R"json({"type": "line", "title": "Growth",
            "x_label": "Time (s)", "y_label": "Distance [m]", "x_unit": "s", "y_unit": "m",
            "x_ticks": [1.0, 2.0, 3.0], "x_tick_labels": ["1", "2", "3"], "x_scale": "linear",
            "y_ticks": [0.0, 5.0, 10.0], "y_tick_labels": ["0", "5", "10"], "y_scale": "linear",
            "elements": [{"label": "squares", "points": [[1, 1], [2, 4], [3, 9]]},
                         {"label": "Line 1", "points": [[1, 2], [2, 3], [3, 4]]}]})json");
        QTest::newRow("a scatter chart on a log axis")
                << QStringLiteral("fig, ax = plt.subplots()\n"
                                  "ax.scatter([1, 10, 100], [3, 4, 5], label='samples')\n"
                                  "ax.set_xscale('log')\n"
                                  "ax.set_xlim(1, 100)\n"
                                  "ax.set_xticks([1, 10, 100])\n"
                                  "ax.set_xticklabels(['one', 'ten', 'hundred'])\n"
                                  "ax.set_yticks([3, 5])\n"
                                  "fig\n")
                << QByteArray(R"json({"type": "scatter", "title": null,
            "x_label": null, "y_label": null, "x_unit": null, "y_unit": null,
            "x_ticks": [1.0, 10.0, 100.0], "x_tick_labels": ["one", "ten", "hundred"], "x_scale": "log",
            "y_ticks": [3.0, 5.0], "y_tick_labels": ["3", "5"], "y_scale": "linear",
            "elements": [{"label": "samples", "points": [[1, 3], [10, 4], [100, 5]]}]})json");
        QTest::newRow("a bar chart: label, group and value")
                << QStringLiteral("fig, ax = plt.subplots()\n"
                                  "ax.bar(['Author A', 'Author B'], [100, 200], label='Books Sold')\n"
                                  "ax.set_title('Book Sales by Authors')\n"
                                  "ax.set_xlabel('Authors')\n"
                                  "ax.set_ylabel('Number of Books Sold')\n")
                << QByteArray(R"json({"type": "bar", "title": "Book Sales by Authors",
            "x_label": "Authors", "y_label": "Number of Books Sold", "x_unit": null, "y_unit": null,
            "elements": [{"label": "Author A", "group": "Books Sold", "value": 100},
                         {"label": "Author B", "group": "Books Sold", "value": 200}]})json");
        QTest::newRow("horizontal bars: the labels swap, the categories are on y")
                << QStringLiteral("fig, ax = plt.subplots()\n"
                                  "ax.barh(['x', 'y'], [3, 5])\n"
                                  "ax.set_xlabel('Count (items)')\n"
                                  "ax.set_ylabel('Kind')\n")
                << QByteArray(R"json({"type": "bar", "title": null,
            "x_label": "Kind", "y_label": "Count (items)", "x_unit": null, "y_unit": "items",
            "elements": [{"label": "x", "group": "Group 0", "value": 3},
                         {"label": "y", "group": "Group 0", "value": 5}]})json");
        QTest::newRow("a pie chart: angles and radii")
                << QStringLiteral("fig, ax = plt.subplots()\n"
                                  "ax.pie([1, 1, 2], labels=['a', 'b', 'c'])\n"
                                  "ax.set_title('Shares')\n")
                << QByteArray(R"json({"type": "pie", "title": "Shares",
            "elements": [{"label": "a", "angle": 90, "radius": 1},
                         {"label": "b", "angle": 90, "radius": 1},
                         {"label": "c", "angle": 180, "radius": 1}]})json");
        QTest::newRow("artists of several kinds: unknown")
                << QStringLiteral("fig, ax = plt.subplots()\n"
                                  "ax.plot([1, 2], [1, 2])\n"
                                  "ax.bar([1], [1])\n"
                                  "ax.set_title('Mixed')\n")
                << QByteArray(R"json({"type": "unknown", "title": "Mixed", "elements": []})json");
        const QByteArray boxes = R"json({"type": "box_and_whisker", "title": "Scores",
            "x_label": "Class", "y_label": "Score", "x_unit": null, "y_unit": null,
            "elements": [{"label": "Class A", "min": 1, "first_quartile": 2.25, "median": 3.5,
                          "third_quartile": 4.75, "max": 5, "outliers": [20]},
                         {"label": "Class B", "min": 2, "first_quartile": 3, "median": 4,
                          "third_quartile": 5, "max": 6, "outliers": []}]})json";
        for (const char *artist : {"lines", "patches"})
            QTest::addRow("a box plot of %s", artist)
                    << QStringLiteral("fig, ax = plt.subplots()\n"
                                      "ax.boxplot([[1, 2, 3, 4, 5, 20], [2, 3, 4, 5, 6]],\n"
                                      "           labels=['Class A', 'Class B'], patch_artist=%1)\n"
                                      "ax.set_title('Scores')\n"
                                      "ax.set_xlabel('Class')\n"
                                      "ax.set_ylabel('Score')\n")
                               .arg(qstrcmp(artist, "patches") == 0 ? "True" : "False")
                    << boxes;
    }

    void figureChartFollowsE2bModel()
    {
        QFETCH(QString, code);
        QFETCH(QByteArray, chart);
        requireCharts();
        QCOMPARE(chartOf(code), parsed(chart.constData()));
    }

    void datetimeAxisHasIsoTicksAndPoints()
    {
        requireCharts();
        const QJsonObject chart = chartOf(QStringLiteral(
                "import datetime\n"
                "fig, ax = plt.subplots()\n"
                "days = [datetime.datetime(2026, 1, d) for d in (1, 2, 3)]\n"
                "ax.plot(days, [5, 6, 7], label='load')\n"
                "ax.set_xticks(days[::2])\n"));
        QCOMPARE(chart.value("x_scale").toString(), QStringLiteral("datetime"));
        QCOMPARE(chart.value("x_ticks").toArray(),
                 QJsonArray({QStringLiteral("2026-01-01T00:00:00+00:00"),
                             QStringLiteral("2026-01-03T00:00:00+00:00")}));
        QCOMPARE(chart.value("elements").toArray()[0].toObject().value("points").toArray()[1].toArray(),
                 QJsonArray({QStringLiteral("2026-01-02T00:00:00"), 6}));
    }

    void categoricalAxisSaysSo()
    {
        requireCharts();
        const QJsonObject chart = chartOf(QStringLiteral(
                "fig, ax = plt.subplots()\n"
                "ax.plot(['mon', 'tue', 'wed'], [3, 1, 2])\n"));
        QCOMPARE(chart.value("type").toString(), QStringLiteral("line"));
        QCOMPARE(chart.value("x_scale").toString(), QStringLiteral("categorical"));
        QCOMPARE(chart.value("x_tick_labels").toArray(),
                 QJsonArray({QStringLiteral("mon"), QStringLiteral("tue"), QStringLiteral("wed")}));
        QCOMPARE(chart.value("elements").toArray()[0].toObject().value("points").toArray()[0].toArray(),
                 QJsonArray({QStringLiteral("mon"), 3}));
    }

    void figureOfSeveralAxesIsASuperchart()
    {
        requireCharts();
        const QJsonObject chart = chartOf(QStringLiteral(
                "fig, (left, right) = plt.subplots(1, 2)\n"
                "left.pie([1, 3], labels=['p', 'q'])\n"
                "right.bar(['r'], [2])\n"
                "fig.suptitle('Both')\n"));
        QCOMPARE(chart.value("type").toString(), QStringLiteral("superchart"));
        QCOMPARE(chart.value("title").toString(), QStringLiteral("Both"));
        const QJsonArray elements = chart.value("elements").toArray();
        QCOMPARE(elements.size(), 2);
        QCOMPARE(elements[0].toObject().value("type").toString(), QStringLiteral("pie"));
        QCOMPARE(elements[1].toObject(), parsed(R"json({"type": "bar", "title": null,
            "x_label": null, "y_label": null, "x_unit": null, "y_unit": null,
            "elements": [{"label": "r", "group": "Group 0", "value": 2}]})json"));
    }

    // plt.show(), a figure as the cell's value and a figure left open at the end of the cell
    // each show the figure once, with its PNG and its chart.
    void everyWayOfShowingAFigureCarriesItsChart()
    {
        requireCharts();
        const ExecutionPtr done = runWith(m_withIPython, QStringLiteral(
                "import matplotlib.pyplot as plt\n"
                "plt.plot([1, 2])\n"
                "plt.show()\n"
                "value = plt.figure()\n"
                "plt.bar(['a'], [1])\n"
                "plt.figure()\n"
                "plt.pie([1])\n"
                "value\n"));
        QVERIFY(done);
        const QList<QJsonObject> charts = withMime(done, kChart);
        QStringList types;
        for (const QJsonObject &bundle : charts) {
            types << bundle.value(kChart).toObject().value("type").toString();
            QVERIFY(QByteArray::fromBase64(bundle.value("image/png").toString().toLatin1())
                            .startsWith("\x89PNG"));
        }
        QCOMPARE(types, QStringList({QStringLiteral("line"), QStringLiteral("bar"), QStringLiteral("pie")}));
        QVERIFY(eventFields(done, QStringLiteral("result")).value("data").toObject().contains(kChart));
    }

    // --- DataFrames --------------------------------------------------------------------------

    void dataFrameCarriesItsColumnsJsonSafe()
    {
        requirePandas();
        const ExecutionPtr done = runWith(m_withIPython, QStringLiteral(
                "import pandas as pd, numpy as np\n"
                "df = pd.DataFrame({'score': [1.5, np.nan, np.inf],\n"
                "                   'when': pd.to_datetime(['2026-01-02 03:04:05', None, '2026-12-31']),\n"
                "                   'name': ['x', None, 'z'],\n"
                "                   'count': [1, 2, 3]})\n"
                "df\n"));
        QVERIFY(done);
        const QJsonObject result = eventFields(done, QStringLiteral("result")).value("data").toObject();
        QVERIFY(result.value("text/html").toString().contains(QLatin1String("<table")));
        QCOMPARE(result.value(kData).toObject(), parsed(R"json({
            "columns": [
                {"name": "score", "dtype": "float64", "values": [1.5, null, null]},
                {"name": "when", "dtype": "datetime64[ns]",
                 "values": ["2026-01-02T03:04:05", null, "2026-12-31T00:00:00"]},
                {"name": "name", "dtype": "object", "values": ["x", null, "z"]},
                {"name": "count", "dtype": "int64", "values": [1, 2, 3]}],
            "index": {"name": null, "values": [0, 1, 2]},
            "rows": 3, "total_rows": 3, "truncated": false})json"));
    }

    void longDataFrameIsCutAndSaysSo()
    {
        requirePandas();
        const ExecutionPtr done = runWith(m_withIPython, QStringLiteral(
                "import pandas as pd\n"
                "pd.DataFrame({'n': range(2500)})\n"));
        QVERIFY(done);
        const QJsonObject data = eventFields(done, QStringLiteral("result")).value("data").toObject()
                                         .value(kData).toObject();
        QCOMPARE(data.value("rows").toInt(), 1000);
        QCOMPARE(data.value("total_rows").toInt(), 2500);
        QCOMPARE(data.value("truncated").toBool(), true);
        const QJsonArray values = data.value("columns").toArray()[0].toObject().value("values").toArray();
        QCOMPARE(values.size(), 1000);
        QCOMPARE(values.last().toInt(), 999);
    }

    void seriesAndDisplayedFramesCarryDataToo()
    {
        requirePandas();
        const ExecutionPtr done = runWith(m_withIPython, QStringLiteral(
                "import pandas as pd\n"
                "from IPython.display import display\n"
                "display(pd.DataFrame({'b': [1], 'a': [2]}).set_index(pd.Index(['r'], name='row')))\n"
                "pd.Series([0.5, 1.5], name='ratio')\n"));
        QVERIFY(done);
        const QList<QJsonObject> tables = withMime(done, kData);
        QCOMPARE(tables.size(), 2);
        QCOMPARE(tables[0].value(kData).toObject(), parsed(R"json({
            "columns": [{"name": "b", "dtype": "int64", "values": [1]},
                        {"name": "a", "dtype": "int64", "values": [2]}],
            "index": {"name": "row", "values": ["r"]},
            "rows": 1, "total_rows": 1, "truncated": false})json"));
        QCOMPARE(tables[1].value(kData).toObject().value("columns").toArray(),
                 parsed(R"json({"c": [{"name": "ratio", "dtype": "float64", "values": [0.5, 1.5]}]})json")
                         .value("c").toArray());
    }
};

QTEST_GUILESS_MAIN(RichOutputTest)
#include "tst_richoutput.moc"
