// SPDX-License-Identifier: Apache-2.0
// The E2B-compatible surface on the wire, against a real replhost-server: what E2B's SDKs read
// (the NDJSON lines of /execute, the context objects), and what they never send but a raw client
// may (both context and language, unknown contexts, malformed and huge bodies, wrong tokens in
// the capability path), on both ways in: /e2b/<token>/… on the main port and the token-less
// --e2b-port listener. tst_e2bsdk runs E2B's published SDK against the same server.

#include "apiclient.h"
#include "ndjsonstream.h"
#include "serverprocess.h"

#include "core/engine.h"
#include "http/apiserver.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QJsonObject findLine(const QList<QJsonObject> &lines, const QString &type)
{
    for (const QJsonObject &line : lines) {
        if (line.value(QStringLiteral("type")).toString() == type)
            return line;
    }
    return {};
}

} // namespace

class tst_E2bWire : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void inputFindsTheEndOfInputAtOnce();
    void healthAnswersOk_data();
    void healthAnswersOk();
    void executeStreamsOneJsonObjectPerLine();
    void resultsCarryMimeFieldsAndExtra();
    void errorCarriesNameValueAndTraceback();
    void indentedCellGivesItsResultAndFigure();
    void shellEscapePrintsTheCwd();
    void outputArrivesInWholeLines();
    void languagesRunInTheirDefaultContext_data();
    void languagesRunInTheirDefaultContext();
    void rValuesAreResultsButNotTheMainOne();
    void envVarsHoldForOneRunOnly();
    void javaSeesRunEnvAsSystemProperties();
    void firstRequestFindsDefaultPythonAndJavaScriptContexts();
    void contextLifecycle();
    void contextAndLanguageTogetherIs400();
    void unknownContextIs404_data();
    void unknownContextIs404();
    void malformedBodyIs400_data();
    void malformedBodyIs400();
    void hugeBodyIs413();
    void keepAliveWhileQuietAndDisconnectInterruptsKeepingState();

    void wrongPathTokenIs401_data();
    void wrongPathTokenIs401();
    void rightPathTokenOnUnknownRouteIs404();
    void tokenNeverReachesLogsOrMetrics();

    void e2bListenerServesOnlyE2bRoutes_data();
    void e2bListenerServesOnlyE2bRoutes();
    void e2bListenerChecksHostAndOrigin();
    void e2bListenerRefusesNonLoopbackAddress();
    void e2bPortOptionIsChecked_data();
    void e2bPortOptionIsChecked();

private:
    // Where the E2B routes are reached with the token in the path, e.g. "/e2b/<token>".
    QString prefix() const { return QStringLiteral("/e2b/") + QString::fromLatin1(m_server.token()); }
    // A request with no Authorization header (E2B clients send none).
    ApiClient::Response e2b(const QByteArray &method, const QString &path, const QByteArray &body = {},
                            const Headers &headers = {}) const;
    // Runs `body` through /execute (capability path) and returns every line.
    QList<QJsonObject> execute(const QJsonObject &body) const;
    // The text of the main result of a run.
    static QString mainText(const QList<QJsonObject> &lines);

    ServerProcess m_server;  // --e2b-port 0 --max-body 1M, access log on
    quint16 m_e2bPort = 0;
    QString m_workspaceDir;
};

void tst_E2bWire::initTestCase()
{
    QVERIFY2(QFileInfo::exists(ServerProcess::executable()), qPrintable(ServerProcess::executable()));
    QMap<QString, QString> environment{
            {QStringLiteral("QT_LOGGING_RULES"), QStringLiteral("replhost.http.access.info=true")}};
    // Debian's Python, which has matplotlib from apt, when there is one (the python3 first on
    // PATH may be another).
    if (QFileInfo(QStringLiteral("/usr/bin/python3")).isExecutable())
        environment.insert(QStringLiteral("REPLHOST_PYTHON"), QStringLiteral("/usr/bin/python3"));
    QVERIFY2(m_server.start({QStringLiteral("--e2b-port"), QStringLiteral("0"),
                             QStringLiteral("--max-body"), QStringLiteral("1M")},
                            environment),
             qPrintable(m_server.error()));
    static const QRegularExpression e2bLine(QStringLiteral("E2B API without a token at http://127\\.0\\.0\\.1:(\\d+)"));
    const QDeadlineTimer deadline(10000);
    while (!deadline.hasExpired() && m_e2bPort == 0) {
        if (const auto match = e2bLine.match(QString::fromUtf8(m_server.output())); match.hasMatch())
            m_e2bPort = quint16(match.captured(1).toUInt());
        else
            QTest::qWait(20);
    }
    QVERIFY2(m_e2bPort != 0, m_server.output().constData());
    QVERIFY(m_e2bPort != m_server.port());

    const ApiClient native(m_server.port(), m_server.token());
    m_workspaceDir = native.get(QStringLiteral("/v1/workspaces/default")).object()
                             .value(QStringLiteral("directory")).toString();
    QVERIFY(!m_workspaceDir.isEmpty());
    if (const QString missing = native.missingLanguage(QStringLiteral("python")); !missing.isEmpty())
        QSKIP(qPrintable(missing));
}

void tst_E2bWire::cleanupTestCase()
{
    QCOMPARE(m_server.stop(), 0);
}

ApiClient::Response tst_E2bWire::e2b(const QByteArray &method, const QString &path,
                                     const QByteArray &body, const Headers &headers) const
{
    return ApiClient(m_server.port(), {}).request(method, path, body, headers, false);
}

QList<QJsonObject> tst_E2bWire::execute(const QJsonObject &body) const
{
    NdjsonStream stream(m_server.port(), prefix() + QStringLiteral("/execute"), json(body));
    if (stream.status() != 200) {
        qWarning() << "execute:" << stream.status() << stream.readBody();
        return {};
    }
    return stream.readAll();
}

QString tst_E2bWire::mainText(const QList<QJsonObject> &lines)
{
    for (const QJsonObject &line : lines) {
        if (line.value(QStringLiteral("type")).toString() == QLatin1String("result")
            && line.value(QStringLiteral("is_main_result")).toBool())
            return line.value(QStringLiteral("text")).toString();
    }
    return {};
}

void tst_E2bWire::healthAnswersOk_data()
{
    QTest::addColumn<bool>("onE2bListener");
    QTest::newRow("capability path") << false;
    QTest::newRow("e2b listener") << true;
}

void tst_E2bWire::healthAnswersOk()
{
    QFETCH(bool, onE2bListener);
    const auto response = onE2bListener
            ? ApiClient(m_e2bPort, {}).request("GET", QStringLiteral("/health"), {}, {}, false)
            : e2b("GET", prefix() + QStringLiteral("/health"));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.body, QByteArray("\"OK\""));
}

void tst_E2bWire::executeStreamsOneJsonObjectPerLine()
{
    NdjsonStream stream(m_server.port(), prefix() + QStringLiteral("/execute"),
                        json({{QStringLiteral("code"), QStringLiteral("import sys\nprint('hi')\n"
                                                                      "print('careful', file=sys.stderr)\n"
                                                                      "'quoted'")},
                              {QStringLiteral("language"), QStringLiteral("python")}}));
    QCOMPARE(stream.status(), 200);
    QCOMPARE(stream.contentType(), QByteArray("application/x-ndjson"));
    const QList<QJsonObject> lines = stream.readAll();
    // stdout and stderr are separate pipes: their order against each other is not kept.
    const QStringList types = lineTypes(lines);
    QCOMPARE(types.size(), 5);
    QCOMPARE(types.first(), QStringLiteral("number_of_executions"));
    QCOMPARE(types.mid(3), (QStringList{QStringLiteral("result"), QStringLiteral("end_of_execution")}));
    QVERIFY(lines[0].value(QStringLiteral("execution_count")).toInt() >= 1);
    const QJsonObject out = findLine(lines, QStringLiteral("stdout"));
    QCOMPARE(out.value(QStringLiteral("text")).toString(), QStringLiteral("hi\n"));
    const QDateTime stamp = QDateTime::fromString(out.value(QStringLiteral("timestamp")).toString(),
                                                  Qt::ISODateWithMs);
    QVERIFY2(stamp.isValid() && stamp.timeSpec() == Qt::UTC,
             qPrintable(out.value(QStringLiteral("timestamp")).toString()));
    QCOMPARE(findLine(lines, QStringLiteral("stderr")).value(QStringLiteral("text")).toString(),
             QStringLiteral("careful\n"));
    // E2B strips one pair of single quotes from text/plain.
    QCOMPARE(lines[3].value(QStringLiteral("text")).toString(), QStringLiteral("quoted"));
    QCOMPARE(lines[3].value(QStringLiteral("is_main_result")).toBool(), true);
    QCOMPARE(lines[3].value(QStringLiteral("extra")).toObject(), QJsonObject());
}

void tst_E2bWire::resultsCarryMimeFieldsAndExtra()
{
    const QList<QJsonObject> lines = execute(
            {{QStringLiteral("code"),
              QStringLiteral("display({'text/plain': 'shown', 'text/html': '<b>x</b>', 'text/markdown': '*x*',"
                             " 'image/svg+xml': '<svg/>', 'image/png': 'iVBOR', 'image/jpeg': '/9j/',"
                             " 'application/pdf': 'JVBER', 'text/latex': '$x$', 'application/json': {'a': 1},"
                             " 'application/javascript': 'f()', 'application/vnd.custom+json': {'b': 2}},"
                             " raw=True)\n6 * 7")}});
    const QList<QJsonObject> results = [&] {
        QList<QJsonObject> out;
        for (const QJsonObject &line : lines) {
            if (line.value(QStringLiteral("type")).toString() == QLatin1String("result"))
                out.append(line);
        }
        return out;
    }();
    QCOMPARE(results.size(), 2);
    const QJsonObject shown = results[0];
    QCOMPARE(shown.value(QStringLiteral("is_main_result")).toBool(), false);
    const QList<QPair<QString, QJsonValue>> fields{
        {QStringLiteral("text"), QStringLiteral("shown")},
        {QStringLiteral("html"), QStringLiteral("<b>x</b>")},
        {QStringLiteral("markdown"), QStringLiteral("*x*")},
        {QStringLiteral("svg"), QStringLiteral("<svg/>")},
        {QStringLiteral("png"), QStringLiteral("iVBOR")},
        {QStringLiteral("jpeg"), QStringLiteral("/9j/")},
        {QStringLiteral("pdf"), QStringLiteral("JVBER")},
        {QStringLiteral("latex"), QStringLiteral("$x$")},
        {QStringLiteral("json"), QJsonObject{{QStringLiteral("a"), 1}}},
        {QStringLiteral("javascript"), QStringLiteral("f()")},
        {QStringLiteral("extra"), QJsonObject{{QStringLiteral("application/vnd.custom+json"),
                                               QJsonObject{{QStringLiteral("b"), 2}}}}},
    };
    for (const auto &[field, value] : fields)
        QVERIFY2(shown.value(field) == value, qPrintable(field + QLatin1String(": ") + QString::fromUtf8(json(shown))));
    QCOMPARE(results[1].value(QStringLiteral("is_main_result")).toBool(), true);
    QCOMPARE(results[1].value(QStringLiteral("text")).toString(), QStringLiteral("42"));
}

// E2B's clients have no way to answer a question: input() finds the end of input at once, also
// when the body carries the native API's "input" field.
void tst_E2bWire::inputFindsTheEndOfInputAtOnce()
{
    const QList<QJsonObject> lines = execute({{QStringLiteral("code"), QStringLiteral("input('Name? ')")},
                                              {QStringLiteral("input"), true}});
    const QJsonObject error = findLine(lines, QStringLiteral("error"));
    QCOMPARE(error.value(QStringLiteral("name")).toString(), QStringLiteral("EOFError"));
    QCOMPARE(lineTypes(lines).last(), QStringLiteral("end_of_execution"));
}

void tst_E2bWire::errorCarriesNameValueAndTraceback()
{
    const QList<QJsonObject> lines = execute({{QStringLiteral("code"), QStringLiteral("def f():\n    return 1 / 0\nf()")}});
    QCOMPARE(lineTypes(lines).count(QStringLiteral("error")), 1);
    const QJsonObject error = findLine(lines, QStringLiteral("error"));
    QCOMPARE(error.value(QStringLiteral("name")).toString(), QStringLiteral("ZeroDivisionError"));
    QCOMPARE(error.value(QStringLiteral("value")).toString(), QStringLiteral("division by zero"));
    // One string, as E2B sends it, with the frames in it.
    QVERIFY(error.value(QStringLiteral("traceback")).isString());
    QVERIFY2(error.value(QStringLiteral("traceback")).toString().contains(QStringLiteral("in f")),
             qPrintable(error.value(QStringLiteral("traceback")).toString()));
    QCOMPARE(lineTypes(lines).last(), QStringLiteral("end_of_execution"));
}

void tst_E2bWire::indentedCellGivesItsResultAndFigure()
{
    // The code of a template string in a client's source, indented with it, as E2B's users
    // send it; IPython takes the indentation off.
    const QList<QJsonObject> probe = execute({{QStringLiteral("code"), QStringLiteral(
            "\n    import importlib.util\n    importlib.util.find_spec('matplotlib') is not None\n    ")}});
    QCOMPARE(findLine(probe, QStringLiteral("error")), QJsonObject());
    if (mainText(probe) != QLatin1String("True"))
        QSKIP("matplotlib is not installed for this Python (scripts/setup installs python3-matplotlib)");
    const QList<QJsonObject> lines = execute({{QStringLiteral("code"), QStringLiteral(
            "\n    import matplotlib\n    matplotlib.use('Agg')\n    import matplotlib.pyplot as plt\n"
            "    plt.plot([1, 4, 9])\n    plt.show()\n    x = 41\n    x + 1\n    ")}});
    QCOMPARE(findLine(lines, QStringLiteral("error")), QJsonObject());
    QCOMPARE(mainText(lines), QStringLiteral("42"));
    int figures = 0;
    for (const QJsonObject &line : lines) {
        if (line.value(QStringLiteral("type")).toString() == QLatin1String("result")
            && !line.value(QStringLiteral("is_main_result")).toBool()) {
            const QByteArray png = QByteArray::fromBase64(line.value(QStringLiteral("png")).toString().toLatin1());
            QVERIFY2(png.startsWith("\x89PNG\r\n\x1a\n"), qPrintable(QString::fromUtf8(json(line)).left(200)));
            ++figures;
        }
    }
    QCOMPARE(figures, 1);
}

void tst_E2bWire::shellEscapePrintsTheCwd()
{
    const QList<QJsonObject> lines = execute({{QStringLiteral("code"), QStringLiteral("!pwd\n!exit 2")}});
    QCOMPARE(findLine(lines, QStringLiteral("error")), QJsonObject());
    QCOMPARE(findLine(lines, QStringLiteral("stdout")).value(QStringLiteral("text")).toString(),
             m_workspaceDir + QLatin1Char('\n'));
    QCOMPARE(mainText(execute({{QStringLiteral("code"), QStringLiteral("_exit_code")}})),
             QStringLiteral("2"));
}

void tst_E2bWire::outputArrivesInWholeLines()
{
    // CPython writes a print's text and its line end separately: the pipe may give them apart.
    QStringList lines;
    for (const QJsonObject &line : execute({{QStringLiteral("code"),
                                             QStringLiteral("for i in range(1000):\n    print(i, flush=True)")}})) {
        if (line.value(QStringLiteral("type")) != QLatin1String("stdout"))
            continue;
        const QString text = line.value(QStringLiteral("text")).toString();
        QVERIFY2(text.endsWith(QLatin1Char('\n')), qPrintable(text));
        lines += text.chopped(1).split(QLatin1Char('\n'));
    }
    QStringList expected;
    for (int i = 0; i < 1000; ++i)
        expected.append(QString::number(i));
    QCOMPARE(lines, expected);
}

void tst_E2bWire::languagesRunInTheirDefaultContext_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("engineLanguage");  // empty: the request is refused
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("stdoutText");
    QTest::addColumn<int>("refusal");

    QTest::newRow("python") << "python" << "python" << "print(20 + 1)" << "21\n" << 0;
    QTest::newRow("javascript") << "javascript" << "javascript" << "console.log(20 + 2)" << "22\n" << 0;
    QTest::newRow("js") << "js" << "javascript" << "console.log(20 + 3)" << "23\n" << 0;
    QTest::newRow("bash") << "bash" << "bash" << "echo $((20 + 4))" << "24\n" << 0;
    QTest::newRow("java") << "java" << "java" << "System.out.println(20 + 5);" << "25\n" << 0;
    QTest::newRow("perl") << "perl" << "perl" << "print 20 + 6, \"\\n\";" << "26\n" << 0;
    QTest::newRow("go") << "go" << "go" << "fmt.Println(20 + 7)" << "27\n" << 0;
    QTest::newRow("typescript") << "typescript" << "typescript" << "const a: number = 20 + 8\nconsole.log(a)" << "28\n" << 0;
    QTest::newRow("ts") << "ts" << "typescript" << "const b: number = 20 + 9\nconsole.log(b)" << "29\n" << 0;
    QTest::newRow("r") << "r" << "jupyter-ir" << "cat(20 + 10, '\\n', sep = '')" << "30\n" << 0;
    QTest::newRow("unknown") << "cobol" << QString() << "DISPLAY 'X'" << QString() << 400;
}

// IRkernel sends each visible value as display_data, and E2B's own server makes a display_data
// a result with is_main_result false: so here, and the execution's text stays empty, as there.
void tst_E2bWire::rValuesAreResultsButNotTheMainOne()
{
    const QString missing = ApiClient(m_server.port(), m_server.token()).missingLanguage(QStringLiteral("jupyter-ir"));
    if (!missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QList<QJsonObject> lines =
            execute({{QStringLiteral("code"), QStringLiteral("x <- 41; x + 1")}, {QStringLiteral("language"), QStringLiteral("r")}});
    QList<QJsonObject> results;
    for (const QJsonObject &line : lines) {
        if (line.value(QStringLiteral("type")).toString() == QLatin1String("result"))
            results.append(line);
    }
    QCOMPARE(results.size(), 1);
    QCOMPARE(results[0].value(QStringLiteral("text")).toString(), QStringLiteral("[1] 42"));
    QCOMPARE(results[0].value(QStringLiteral("is_main_result")).toBool(true), false);
    QCOMPARE(mainText(lines), QString());
    QCOMPARE(lineTypes(lines).last(), QStringLiteral("end_of_execution"));
}

void tst_E2bWire::languagesRunInTheirDefaultContext()
{
    QFETCH(QString, language);
    QFETCH(QString, engineLanguage);
    QFETCH(QString, code);
    QFETCH(QString, stdoutText);
    QFETCH(int, refusal);
    const ApiClient native(m_server.port(), m_server.token());
    if (!engineLanguage.isEmpty()) {
        const QString missing = native.missingLanguage(engineLanguage);
        if (missing.contains(QStringLiteral("plugin is not built")) && engineLanguage == QLatin1String("go")) {
            // No Go plugin in this build: the engine's own error speaks, naming the languages
            // there are.
            refusal = 400;
        } else if (!missing.isEmpty()) {
            QSKIP(qPrintable(missing));
        }
    }

    NdjsonStream stream(m_server.port(), prefix() + QStringLiteral("/execute"),
                        json({{QStringLiteral("code"), code}, {QStringLiteral("language"), language}}));
    if (refusal != 0) {
        QCOMPARE(stream.status(), refusal);
        const QJsonObject error = QJsonDocument::fromJson(stream.readBody()).object();
        QVERIFY2(error.value(QStringLiteral("message")).toString().contains(
                         QStringLiteral("unknown language")),
                 qPrintable(error.value(QStringLiteral("message")).toString()));
        return;
    }
    QCOMPARE(stream.status(), 200);
    const QList<QJsonObject> lines = stream.readAll();
    QCOMPARE(findLine(lines, QStringLiteral("stdout")).value(QStringLiteral("text")).toString(), stdoutText);
    QCOMPARE(lineTypes(lines).last(), QStringLiteral("end_of_execution"));

    // The run went to the language's default context: the oldest of that language.
    const QJsonArray contexts = e2b("GET", prefix() + QStringLiteral("/contexts")).array();
    QString defaultContext;
    for (const QJsonValue &context : contexts) {
        if (context[QStringLiteral("language")].toString() == engineLanguage) {
            defaultContext = context[QStringLiteral("id")].toString();
            break;
        }
    }
    QVERIFY(!defaultContext.isEmpty());
    const auto history = native.get(QStringLiteral("/v1/contexts/%1/executions").arg(defaultContext));
    const QJsonArray runs = history.object().value(QStringLiteral("executions")).toArray();
    QVERIFY(!runs.isEmpty());
    QCOMPARE(runs.first()[QStringLiteral("code")].toString(), code);
}

void tst_E2bWire::envVarsHoldForOneRunOnly()
{
    const QString read = QStringLiteral("import os\nos.environ.get('REPLHOST_E2B_WIRE', 'unset')");
    const QList<QJsonObject> during = execute(
            {{QStringLiteral("code"), read},
             {QStringLiteral("env_vars"), QJsonObject{{QStringLiteral("REPLHOST_E2B_WIRE"), QStringLiteral("for this run")}}}});
    QCOMPARE(mainText(during), QStringLiteral("for this run"));
    QCOMPARE(mainText(execute({{QStringLiteral("code"), read}})), QStringLiteral("unset"));
}

void tst_E2bWire::javaSeesRunEnvAsSystemProperties()
{
    if (const QString missing = ApiClient(m_server.port(), m_server.token()).missingLanguage(QStringLiteral("java"));
        !missing.isEmpty())
        QSKIP(qPrintable(missing));
    // E2B's Java kernel passes a run's env as system properties; its clients read either.
    const QString read = QStringLiteral(
            "System.out.println(System.getProperty(\"REPLHOST_E2B_JAVA\", \"unset\") + \" \" + System.getenv(\"REPLHOST_E2B_JAVA\"));");
    const QList<QJsonObject> during = execute(
            {{QStringLiteral("code"), read}, {QStringLiteral("language"), QStringLiteral("java")},
             {QStringLiteral("env_vars"), QJsonObject{{QStringLiteral("REPLHOST_E2B_JAVA"), QStringLiteral("it's \"quoted\"")}}}});
    QCOMPARE(findLine(during, QStringLiteral("stdout")).value(QStringLiteral("text")).toString(),
             QStringLiteral("it's \"quoted\" it's \"quoted\"\n"));
    const QList<QJsonObject> after = execute(
            {{QStringLiteral("code"), read}, {QStringLiteral("language"), QStringLiteral("java")}});
    QCOMPARE(findLine(after, QStringLiteral("stdout")).value(QStringLiteral("text")).toString(),
             QStringLiteral("unset null\n"));
}

void tst_E2bWire::firstRequestFindsDefaultPythonAndJavaScriptContexts()
{
    ServerProcess fresh;
    QVERIFY2(fresh.start({}), qPrintable(fresh.error()));
    const ApiClient native(fresh.port(), fresh.token());
    QStringList expected{QStringLiteral("python")};
    if (native.missingLanguage(QStringLiteral("javascript")).isEmpty())
        expected.append(QStringLiteral("javascript"));
    // As E2B's server starts with them: the first listing a client makes has both.
    const QString prefix = QStringLiteral("/e2b/") + QString::fromLatin1(fresh.token());
    const auto listed = ApiClient(fresh.port(), {}).request("GET", prefix + QStringLiteral("/contexts"), {}, {}, false);
    QCOMPARE(listed.status, 200);
    QStringList languages;
    for (const QJsonValue &context : listed.array())
        languages.append(context[QStringLiteral("language")].toString());
    QCOMPARE(languages, expected);
    // They are the languages' default contexts, and a removed one is not made again.
    const QString python = listed.array().at(0)[QStringLiteral("id")].toString();
    QCOMPARE(ApiClient(fresh.port(), {}).request("DELETE", prefix + QStringLiteral("/contexts/") + python, {}, {}, false).status, 200);
    const auto again = ApiClient(fresh.port(), {}).request("GET", prefix + QStringLiteral("/contexts"), {}, {}, false);
    QCOMPARE(again.array().size(), expected.size() - 1);
    QCOMPARE(fresh.stop(), 0);
}

void tst_E2bWire::contextLifecycle()
{
    const auto created = e2b("POST", prefix() + QStringLiteral("/contexts"),
                             json({{QStringLiteral("language"), QStringLiteral("python")}}));
    QCOMPARE(created.status, 200);
    const QJsonObject context = created.object();
    QCOMPARE(context.keys(), (QStringList{QStringLiteral("cwd"), QStringLiteral("id"), QStringLiteral("language")}));
    QCOMPARE(context.value(QStringLiteral("language")).toString(), QStringLiteral("python"));
    // No cwd: the workspace directory (E2B's default, /home/user, is outside it).
    QCOMPARE(context.value(QStringLiteral("cwd")).toString(), m_workspaceDir);
    const QString id = context.value(QStringLiteral("id")).toString();

    const QJsonArray listed = e2b("GET", prefix() + QStringLiteral("/contexts")).array();
    QVERIFY(listed.contains(context));

    QCOMPARE(mainText(execute({{QStringLiteral("code"), QStringLiteral("kept = 'before'\nkept")},
                               {QStringLiteral("context_id"), id}})),
             QStringLiteral("before"));
    const auto restarted = e2b("POST", prefix() + QStringLiteral("/contexts/%1/restart").arg(id));
    QCOMPARE(restarted.status, 200);
    QCOMPARE(restarted.body, QByteArray("null"));
    const QList<QJsonObject> after = execute({{QStringLiteral("code"), QStringLiteral("kept")},
                                              {QStringLiteral("context_id"), id}});
    QCOMPARE(findLine(after, QStringLiteral("error")).value(QStringLiteral("name")).toString(),
             QStringLiteral("NameError"));

    const auto removed = e2b("DELETE", prefix() + QStringLiteral("/contexts/%1").arg(id));
    QCOMPARE(removed.status, 200);
    QCOMPARE(removed.body, QByteArray("null"));
    QVERIFY(!e2b("GET", prefix() + QStringLiteral("/contexts")).array().contains(context));
}

void tst_E2bWire::contextAndLanguageTogetherIs400()
{
    NdjsonStream stream(m_server.port(), prefix() + QStringLiteral("/execute"),
                        json({{QStringLiteral("code"), QStringLiteral("1")},
                              {QStringLiteral("context_id"), QStringLiteral("anything")},
                              {QStringLiteral("language"), QStringLiteral("python")}}));
    QCOMPARE(stream.status(), 400);
    const QJsonObject error = QJsonDocument::fromJson(stream.readBody()).object();
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Only one of context_id or language can be provided"));
}

void tst_E2bWire::unknownContextIs404_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("route");
    QTest::addColumn<QByteArray>("body");
    const QByteArray run = json({{QStringLiteral("code"), QStringLiteral("1")},
                                 {QStringLiteral("context_id"), QStringLiteral("no-such-context")}});
    QTest::newRow("execute") << QByteArray("POST") << "/execute" << run;
    QTest::newRow("restart") << QByteArray("POST") << "/contexts/no-such-context/restart" << QByteArray();
    QTest::newRow("delete") << QByteArray("DELETE") << "/contexts/no-such-context" << QByteArray();
}

void tst_E2bWire::unknownContextIs404()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, route);
    QFETCH(QByteArray, body);
    const auto response = e2b(method, prefix() + route, body);
    QCOMPARE(response.status, 404);
    QCOMPARE(response.object().value(QStringLiteral("message")).toString(),
             QStringLiteral("Context no-such-context not found"));
}

void tst_E2bWire::malformedBodyIs400_data()
{
    QTest::addColumn<QString>("route");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("named");  // what the message must mention
    QTest::newRow("execute, cut short") << "/execute" << QByteArray(R"({"code": )") << "JSON";
    QTest::newRow("execute, not an object") << "/execute" << QByteArray("[1]") << "JSON";
    QTest::newRow("execute, no code") << "/execute" << QByteArray(R"({"language": "python"})") << "code";
    QTest::newRow("execute, code not a string") << "/execute" << QByteArray(R"({"code": 1})") << "code";
    QTest::newRow("execute, env_vars not strings")
            << "/execute" << QByteArray(R"({"code": "1", "env_vars": {"A": 1}})") << "env_vars";
    QTest::newRow("execute, bad env name")
            << "/execute" << QByteArray(R"({"code": "1", "env_vars": {"A=B": "1"}})") << "A=B";
    QTest::newRow("contexts, cut short") << "/contexts" << QByteArray(R"({"language")") << "JSON";
    QTest::newRow("contexts, cwd not a string") << "/contexts" << QByteArray(R"({"cwd": 5})") << "cwd";
    QTest::newRow("contexts, cwd outside the workspace") << "/contexts" << QByteArray(R"({"cwd": "/"})") << "outside";
}

void tst_E2bWire::malformedBodyIs400()
{
    QFETCH(QString, route);
    QFETCH(QByteArray, body);
    QFETCH(QString, named);
    const auto response = e2b("POST", prefix() + route, body);
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
    QVERIFY2(response.object().value(QStringLiteral("message")).toString().contains(named), response.body.constData());
}

void tst_E2bWire::hugeBodyIs413()
{
    // Refused from the headers alone: the body is never sent.
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("POST " + prefix().toUtf8() + "/execute HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            "Content-Type: application/json\r\nContent-Length: 2097152\r\n\r\n"));
    QCOMPARE(statusCodes(connection.readResponses(1)), QList<int>{413});
}

void tst_E2bWire::keepAliveWhileQuietAndDisconnectInterruptsKeepingState()
{
    const auto created = e2b("POST", prefix() + QStringLiteral("/contexts"), QByteArray("{}"));
    QCOMPARE(created.status, 200);
    const QString id = created.object().value(QStringLiteral("id")).toString();
    QCOMPARE(mainText(execute({{QStringLiteral("code"), QStringLiteral("kept = 'yes'\nkept")},
                               {QStringLiteral("context_id"), id}})),
             QStringLiteral("yes"));

    // Quiet for a minute unless interrupted; `finished` is only set if it is not.
    auto stream = std::make_unique<NdjsonStream>(
            m_server.port(), prefix() + QStringLiteral("/execute"),
            json({{QStringLiteral("code"), QStringLiteral("import time\nfor _ in range(240):\n    time.sleep(0.25)\nfinished = True")},
                  {QStringLiteral("context_id"), id}}));
    QCOMPARE(stream->status(), 200);
    bool sawKeepAlive = false;
    while (std::optional<QJsonObject> line = stream->next(30000)) {
        QVERIFY2(line->value(QStringLiteral("type")).toString() != QLatin1String("end_of_execution"),
                 "the run ended before a keepalive line came");
        if (line->value(QStringLiteral("type")).toString() == QLatin1String("keepalive")) {
            sawKeepAlive = true;
            break;
        }
    }
    QVERIFY(sawKeepAlive);
    stream->abort();  // the client gives up, as the SDK does when its timeoutMs passes

    // The next run waits for the interrupted one, then sees the state from before it, and not
    // what the rest of the interrupted run would have set.
    const QList<QJsonObject> after = execute({{QStringLiteral("code"), QStringLiteral("(kept, 'finished' in globals())")},
                                              {QStringLiteral("context_id"), id}});
    QCOMPARE(mainText(after), QStringLiteral("('yes', False)"));
    QCOMPARE(e2b("DELETE", prefix() + QStringLiteral("/contexts/%1").arg(id)).status, 200);
}

void tst_E2bWire::wrongPathTokenIs401_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("route");
    QTest::addRow("execute") << QByteArray("POST") << "/execute";
    QTest::addRow("contexts") << QByteArray("GET") << "/contexts";
    QTest::addRow("health") << QByteArray("GET") << "/health";
    QTest::addRow("unknown route") << QByteArray("GET") << "/nothing-here";
}

void tst_E2bWire::wrongPathTokenIs401()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, route);
    // As long as the real one, and different in its last character only.
    QByteArray wrong = m_server.token();
    wrong.back() = wrong.back() == '0' ? '1' : '0';
    const QString path = QStringLiteral("/e2b/") + QString::fromLatin1(wrong) + route;
    const auto response = e2b(method, path, method == "POST" ? QByteArray(R"({"code": "1"})") : QByteArray());
    QCOMPARE(response.status, 401);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("unauthorized"));
    QVERIFY(!response.body.contains(wrong));
    QVERIFY(!response.body.contains(m_server.token()));
}

void tst_E2bWire::rightPathTokenOnUnknownRouteIs404()
{
    // envd's filesystem RPC, which replhost does not serve.
    const auto response = e2b("GET", prefix() + QStringLiteral("/filesystem.Filesystem/ListDir"));
    QCOMPARE(response.status, 404);
    QVERIFY(!response.body.contains(m_server.token()));
    QVERIFY2(response.body.contains("/e2b/{token}/filesystem.Filesystem/ListDir"), response.body.constData());
}

void tst_E2bWire::tokenNeverReachesLogsOrMetrics()
{
    QByteArray wrong = m_server.token();
    wrong.back() = wrong.back() == '0' ? '1' : '0';
    QCOMPARE(e2b("GET", QStringLiteral("/e2b/") + QString::fromLatin1(wrong) + QStringLiteral("/health")).status, 401);
    QCOMPARE(e2b("GET", prefix() + QStringLiteral("/health")).status, 200);

    const auto metrics = ApiClient(m_server.port(), m_server.token()).get(QStringLiteral("/metrics"));
    QCOMPARE(metrics.status, 200);
    QVERIFY2(metrics.body.contains("route=\"GET /e2b/{token}/health\""), metrics.body.constData());
    QVERIFY(!metrics.body.contains(m_server.token()));
    QVERIFY(!metrics.body.contains(wrong));

    // The access log is on for this server: the requests are in it, their tokens are not.
    QTRY_VERIFY_WITH_TIMEOUT(m_server.errors().contains("GET /e2b/{token}/health"), 5000);
    const QByteArray log = m_server.errors();
    QVERIFY2(!log.contains(m_server.token()), "the token is in the server's log");
    QVERIFY2(!log.contains(wrong), "a wrong token is in the server's log");
}

void tst_E2bWire::e2bListenerServesOnlyE2bRoutes_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("status");
    QTest::newRow("health") << QByteArray("GET") << "/health" << 200;
    QTest::newRow("contexts") << QByteArray("GET") << "/contexts" << 200;
    QTest::newRow("native contexts") << QByteArray("GET") << "/v1/contexts" << 404;
    QTest::newRow("native healthz") << QByteArray("GET") << "/healthz" << 404;
    QTest::newRow("metrics") << QByteArray("GET") << "/metrics" << 404;
    QTest::newRow("capability path") << QByteArray("GET") << "/e2b/anything/health" << 404;
}

void tst_E2bWire::e2bListenerServesOnlyE2bRoutes()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(int, status);
    // The main token is worth nothing here: this listener knows no token.
    const auto response = ApiClient(m_e2bPort, m_server.token()).request(method, path);
    QCOMPARE(response.status, status);
}

void tst_E2bWire::e2bListenerChecksHostAndOrigin()
{
    const ApiClient client(m_e2bPort, {});
    const QByteArray run = json({{QStringLiteral("code"), QStringLiteral("1")}});
    const auto page = client.request("POST", QStringLiteral("/execute"), run,
                                     {{"Origin", "http://evil.example"}}, false);
    QCOMPARE(page.status, 403);
    const auto rebound = client.request("POST", QStringLiteral("/execute"), run,
                                        {{"Host", "evil.example:" + QByteArray::number(m_e2bPort)}}, false);
    QCOMPARE(rebound.status, 403);
    NdjsonStream local(m_e2bPort, QStringLiteral("/execute"), run);
    QCOMPARE(local.status(), 200);
    QCOMPARE(mainText(local.readAll()), QStringLiteral("1"));
}

void tst_E2bWire::e2bListenerRefusesNonLoopbackAddress()
{
    QTemporaryDir dataDir;
    replhost::core::EngineConfig config;
    config.dataDir = dataDir.path();
    auto engine = replhost::core::Engine::open(config);
    QVERIFY2(engine.ok(), engine.ok() ? "" : qPrintable(engine.error().message));
    replhost::http::ApiServerConfig serverConfig;
    serverConfig.address = QHostAddress(QHostAddress::AnyIPv4);
    serverConfig.e2bOnly = true;
    replhost::http::ApiServer server(**engine, serverConfig);
    const replhost::Result<void> listening = server.listen();
    QVERIFY(!listening);
    QVERIFY2(listening.error().message.contains(QStringLiteral("loopback")), qPrintable(listening.error().message));
}

void tst_E2bWire::e2bPortOptionIsChecked_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("not a number") << QStringList{QStringLiteral("--e2b-port"), QStringLiteral("http")}
                                  << "--e2b-port must be a number";
    QTest::newRow("too large") << QStringList{QStringLiteral("--e2b-port"), QStringLiteral("70000")}
                               << "--e2b-port must be a number";
    QTest::newRow("same as --port") << QStringList{QStringLiteral("--port"), QStringLiteral("45123"),
                                                   QStringLiteral("--e2b-port"), QStringLiteral("45123")}
                                    << "--e2b-port must differ from --port";
}

void tst_E2bWire::e2bPortOptionIsChecked()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    QTemporaryDir dataDir;
    const ServerProcess::Run run = ServerProcess::runOnce(
            arguments + QStringList{QStringLiteral("--data-dir"), dataDir.path()});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(message.toUtf8()), run.err.constData());
}

QTEST_GUILESS_MAIN(tst_E2bWire)
#include "tst_e2bwire.moc"
