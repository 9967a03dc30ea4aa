// SPDX-License-Identifier: Apache-2.0
// `replhost-cli kernelspec install|list|remove`, checked with what Jupyter itself reads
// (jupyter_client's KernelSpecManager) and by starting the kernels they describe.

#include "apiclient.h"
#include "jupyterharness.h"
#include "serverprocess.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using H = JupyterHarness;

class tst_Kernelspec : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void installWritesAKernelspecPerAvailableLanguage();
    void kernelspecDescribesTheKernel_data();
    void kernelspecDescribesTheKernel();
    void installedKernelspecRunsCells();
    void installWithLanguagesNeedsNoServer();
    void installBoundToAContextRunsInIt();
    void userInstallGoesToJupytersDataDir();
    void listShowsOnlyReplhostKernelspecs();
    void removeDeletesOnlyReplhostKernelspecs();
    void userAndPrefixTogetherAreAUsageError();
    void languageThatIsAPathIsRefused_data();
    void languageThatIsAPathIsRefused();
    void removeTakesNamesNotPaths();

private:
    ApiClient client() const { return ApiClient(m_server->port(), m_server->token()); }
    // {name: {"resource_dir", "spec"}} of every kernelspec Jupyter finds.
    QJsonObject jupyterSees(const QMap<QString, QString> &environment = {}) const;
    // A kernelspec of another kernel, in the Jupyter home.
    void addForeignKernelspec(const QString &name) const;

    std::unique_ptr<ServerProcess> m_server;
    std::unique_ptr<JupyterHarness> m_jupyter;
};

void tst_Kernelspec::initTestCase()
{
    m_server = std::make_unique<ServerProcess>();
    QVERIFY2(m_server->start(), qPrintable(m_server->error()));
}

void tst_Kernelspec::cleanupTestCase()
{
    if (m_server)
        m_server->stop();
}

void tst_Kernelspec::init()
{
    // A fresh Jupyter home for each behaviour.
    m_jupyter = std::make_unique<JupyterHarness>(m_server->dataDir());
}

QJsonObject tst_Kernelspec::jupyterSees(const QMap<QString, QString> &environment) const
{
    const H::Run listed = m_jupyter->run(
            H::python(),
            {QStringLiteral("-c"),
             QStringLiteral("import json\n"
                            "from jupyter_client.kernelspec import KernelSpecManager\n"
                            "m = KernelSpecManager()\n"
                            "print(json.dumps({n: {'resource_dir': d, 'spec': m.get_kernel_spec(n).to_dict()}"
                            " for n, d in m.find_kernel_specs().items()}))")},
            {}, environment);
    if (listed.exitCode != 0)
        qWarning("%s", listed.err.constData());
    return QJsonDocument::fromJson(listed.out).object();
}

void tst_Kernelspec::addForeignKernelspec(const QString &name) const
{
    const QString directory = m_jupyter->jupyterPath() + QStringLiteral("/kernels/") + name;
    QDir().mkpath(directory);
    QFile file(directory + QStringLiteral("/kernel.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "Python 3", "language": "python"})");
}

void tst_Kernelspec::installWritesAKernelspecPerAvailableLanguage()
{
    const QStringList installed = m_jupyter->installKernelspecs({});
    QStringList available;
    for (const QJsonValue &language : client().get(QStringLiteral("/v1/languages")).array()) {
        if (language[QStringLiteral("available")].toBool())
            available.append(QStringLiteral("replhost-") + language[QStringLiteral("id")].toString());
    }
    QVERIFY(!available.isEmpty());
    QCOMPARE(installed, available);
    const QJsonObject seen = jupyterSees();
    for (const QString &name : available)
        QVERIFY2(seen.contains(name), qPrintable(QJsonDocument(seen).toJson()));
}

void tst_Kernelspec::kernelspecDescribesTheKernel_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("displayName");
    QTest::newRow("python") << "python" << "Python (replhost)";
    QTest::newRow("javascript") << "javascript" << "JavaScript (replhost)";
    QTest::newRow("typescript") << "typescript" << "TypeScript (replhost)";
    QTest::newRow("perl") << "perl" << "Perl (replhost)";
    QTest::newRow("java") << "java" << "Java (replhost)";
    QTest::newRow("go") << "go" << "Go (replhost)";
    QTest::newRow("bash") << "bash" << "Bash (replhost)";
}

void tst_Kernelspec::kernelspecDescribesTheKernel()
{
    QFETCH(QString, language);
    QFETCH(QString, displayName);
    QCOMPARE(m_jupyter->installKernelspecs({QStringLiteral("-l"), language}),
             QStringList{QStringLiteral("replhost-") + language});
    const QJsonObject entry = jupyterSees()[QStringLiteral("replhost-") + language].toObject();
    const QJsonObject spec = entry[QStringLiteral("spec")].toObject();
    QCOMPARE(spec[QStringLiteral("display_name")].toString(), displayName);
    QCOMPARE(spec[QStringLiteral("language")].toString(), language);
    QCOMPARE(spec[QStringLiteral("interrupt_mode")].toString(), QStringLiteral("message"));
    const QStringList argv = spec[QStringLiteral("argv")].toVariant().toStringList();
    // This build's kernel, for this server's data dir.
    QCOMPARE(argv.value(0), H::kernelExecutable());
    QVERIFY(argv.contains(QStringLiteral("{connection_file}")));
    QCOMPARE(argv.value(argv.indexOf(QStringLiteral("--language")) + 1), language);
    QCOMPARE(argv.value(argv.indexOf(QStringLiteral("--data-dir")) + 1), m_server->dataDir());
    for (const QString &argument : argv)
        QVERIFY(!argument.contains(QString::fromLatin1(m_server->token())));
    QVERIFY(QFile::exists(entry[QStringLiteral("resource_dir")].toString() + QStringLiteral("/logo-svg.svg")));
}

void tst_Kernelspec::installedKernelspecRunsCells()
{
    const QString why = client().missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));
    QCOMPARE(m_jupyter->installKernelspecs({QStringLiteral("-l"), QStringLiteral("python")}).size(), 1);
    const QJsonArray results =
            m_jupyter->drive(QStringLiteral("replhost-python"), {H::execute(QStringLiteral("print(6 * 7)"))});
    QVERIFY2(results.size() == 1, qPrintable(m_jupyter->error()));
    QCOMPARE(H::streamText(results[0].toObject()), QStringLiteral("42\n"));
}

void tst_Kernelspec::installWithLanguagesNeedsNoServer()
{
    QTemporaryDir empty;
    const H::Run installed = m_jupyter->cli({QStringLiteral("--data-dir"), empty.path(), QStringLiteral("kernelspec"),
                                             QStringLiteral("install"), QStringLiteral("--prefix"), m_jupyter->home(),
                                             QStringLiteral("-l"), QStringLiteral("python"), QStringLiteral("-l"),
                                             QStringLiteral("bash")});
    QVERIFY2(installed.exitCode == 0, installed.err.constData());
    const QJsonObject seen = jupyterSees();
    QVERIFY(seen.contains(QStringLiteral("replhost-python")));
    QVERIFY(seen.contains(QStringLiteral("replhost-bash")));
    QCOMPARE(seen.keys().filter(QStringLiteral("replhost-")).size(), 2);
    // Nothing was started for that data dir.
    QVERIFY(!QFile::exists(empty.filePath(QStringLiteral("server.json"))));
}

void tst_Kernelspec::installBoundToAContextRunsInIt()
{
    const QString why = client().missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));
    const QString contextId = client().createContext(QStringLiteral("python"));
    QVERIFY(!contextId.isEmpty());
    QCOMPARE(client().runAndWait(contextId, QStringLiteral("x = 41"))[QStringLiteral("status")].toString(),
             QStringLiteral("ok"));

    const QStringList installed = m_jupyter->installKernelspecs({QStringLiteral("--context"), contextId});
    QCOMPARE(installed, QStringList{QStringLiteral("replhost-python-") + contextId.left(8)});
    const QJsonObject spec = jupyterSees()[installed.first()][QStringLiteral("spec")].toObject();
    QCOMPARE(spec[QStringLiteral("display_name")].toString(), QStringLiteral("Python (replhost, %1)").arg(contextId.left(8)));
    const QStringList argv = spec[QStringLiteral("argv")].toVariant().toStringList();
    QCOMPARE(argv.value(argv.indexOf(QStringLiteral("--context")) + 1), contextId);

    const QJsonArray results = m_jupyter->drive(installed.first(), {H::execute(QStringLiteral("print(x + 1)"))});
    QVERIFY2(results.size() == 1, qPrintable(m_jupyter->error()));
    QCOMPARE(H::streamText(results[0].toObject()), QStringLiteral("42\n"));
}

void tst_Kernelspec::userInstallGoesToJupytersDataDir()
{
    const QString userDir = m_jupyter->home() + QStringLiteral("/user");
    const QMap<QString, QString> environment{{QStringLiteral("JUPYTER_DATA_DIR"), userDir}};
    const H::Run installed = m_jupyter->cli({QStringLiteral("kernelspec"), QStringLiteral("install"), QStringLiteral("--user"),
                                             QStringLiteral("-l"), QStringLiteral("perl")},
                                            environment);
    QVERIFY2(installed.exitCode == 0, installed.err.constData());
    QVERIFY(QFile::exists(userDir + QStringLiteral("/kernels/replhost-perl/kernel.json")));
    QCOMPARE(jupyterSees(environment)[QStringLiteral("replhost-perl")][QStringLiteral("resource_dir")].toString(),
             userDir + QStringLiteral("/kernels/replhost-perl"));
}

void tst_Kernelspec::listShowsOnlyReplhostKernelspecs()
{
    addForeignKernelspec(QStringLiteral("python3"));
    QCOMPARE(m_jupyter->installKernelspecs({QStringLiteral("-l"), QStringLiteral("python"), QStringLiteral("-l"),
                                            QStringLiteral("go")})
                     .size(),
             2);
    const H::Run listed = m_jupyter->cli({QStringLiteral("--json"), QStringLiteral("kernelspec"), QStringLiteral("list"),
                                          QStringLiteral("--prefix"), m_jupyter->home()});
    QCOMPARE(listed.exitCode, 0);
    const QJsonArray specs = QJsonDocument::fromJson(listed.out).array();
    QStringList names;
    for (const QJsonValue &spec : specs)
        names.append(spec[QStringLiteral("name")].toString());
    QCOMPARE(names, (QStringList{QStringLiteral("replhost-go"), QStringLiteral("replhost-python")}));
    QCOMPARE(specs[1][QStringLiteral("language")].toString(), QStringLiteral("python"));
    QVERIFY(specs[1][QStringLiteral("context")].isNull());
    // Without --prefix, the list comes from Jupyter's search path (JUPYTER_PATH holds the home).
    const H::Run searched = m_jupyter->cli({QStringLiteral("kernelspec"), QStringLiteral("list")});
    QVERIFY(searched.out.contains("replhost-python"));
    QVERIFY(!searched.out.contains("python3 "));
}

void tst_Kernelspec::removeDeletesOnlyReplhostKernelspecs()
{
    addForeignKernelspec(QStringLiteral("python3"));
    QCOMPARE(m_jupyter->installKernelspecs({QStringLiteral("-l"), QStringLiteral("python")}).size(), 1);
    const H::Run removed = m_jupyter->cli({QStringLiteral("kernelspec"), QStringLiteral("remove"), QStringLiteral("replhost-python")});
    QVERIFY2(removed.exitCode == 0, removed.err.constData());
    QVERIFY(!jupyterSees().contains(QStringLiteral("replhost-python")));

    const H::Run refused = m_jupyter->cli({QStringLiteral("kernelspec"), QStringLiteral("remove"), QStringLiteral("python3")});
    QCOMPARE(refused.exitCode, 1);
    QVERIFY(refused.err.contains("no replhost kernelspec named python3"));
    QVERIFY(QFile::exists(m_jupyter->jupyterPath() + QStringLiteral("/kernels/python3/kernel.json")));
}

void tst_Kernelspec::userAndPrefixTogetherAreAUsageError()
{
    const H::Run refused = m_jupyter->cli({QStringLiteral("kernelspec"), QStringLiteral("install"), QStringLiteral("--user"),
                                           QStringLiteral("--prefix"), m_jupyter->home(), QStringLiteral("-l"),
                                           QStringLiteral("python")});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY(refused.err.contains("--user or --prefix"));
}

void tst_Kernelspec::languageThatIsAPathIsRefused_data()
{
    QTest::addColumn<QString>("language");
    QTest::newRow("parent directory") << "../../evil";
    QTest::newRow("absolute path") << "/tmp/evil";
    QTest::newRow("dot name") << "..";
    QTest::newRow("hidden name") << ".evil";
    QTest::newRow("space") << "py thon";
    QTest::newRow("empty") << "";
}

void tst_Kernelspec::languageThatIsAPathIsRefused()
{
    QFETCH(QString, language);
    const H::Run refused = m_jupyter->cli({QStringLiteral("kernelspec"), QStringLiteral("install"), QStringLiteral("--prefix"),
                                           m_jupyter->home(), QStringLiteral("-l"), language});
    QCOMPARE(refused.exitCode, 2);
    // Nothing was written, inside the kernels directory or next to it.
    QVERIFY(QDir(m_jupyter->jupyterPath() + QStringLiteral("/kernels")).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).isEmpty());
    QVERIFY(!QFile::exists(m_jupyter->jupyterPath() + QStringLiteral("/evil")));
    QVERIFY(!QFile::exists(QStringLiteral("/tmp/evil")));
}

void tst_Kernelspec::removeTakesNamesNotPaths()
{
    QCOMPARE(m_jupyter->installKernelspecs({QStringLiteral("-l"), QStringLiteral("python")}).size(), 1);
    // A path that leads to the kernelspec is not its name.
    const H::Run refused = m_jupyter->cli({QStringLiteral("kernelspec"), QStringLiteral("remove"),
                                           QStringLiteral("../kernels/replhost-python")});
    QCOMPARE(refused.exitCode, 1);
    QVERIFY(jupyterSees().contains(QStringLiteral("replhost-python")));
}

QTEST_GUILESS_MAIN(tst_Kernelspec)
#include "tst_kernelspec.moc"
