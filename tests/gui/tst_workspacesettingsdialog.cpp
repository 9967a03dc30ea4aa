// SPDX-License-Identifier: Apache-2.0
// The workspace settings dialog over both engines the workbench knows: one in this process
// (InProcessEngine) and a real replhost-server on 127.0.0.1 (HttpEngine over its API). It shows
// the effective settings once they are read, sends only what was changed, and stays open with
// the engine's message when a value is refused.
#include "apiclient.h"
#include "serverclient.h"
#include "serverprocess.h"

#include "core/engine.h"
#include "core/workerconfinement.h"
#include "gui/engineclient.h"
#include "gui/httpengine.h"
#include "gui/inprocessengine.h"
#include "gui/workspacesettingsdialog.h"
#include "storage/store.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

using namespace replhost;
using namespace replhost::core;
using replhost::gui::WorkspaceSettingsDialog;

namespace {

constexpr int kTimeout = 60000;
// The server's default the workspaces below do not override.
constexpr int kDefaultTimeoutMs = 90000;

// One engine behind an EngineClient: in this process, or a server's. Workspaces are made and
// read as another client of the engine would, not through the dialog's client.
class Backend {
public:
    explicit Backend(const QString &kind)
    {
        if (kind == QLatin1String("in-process")) {
            QVERIFY(m_dir.isValid());
            EngineConfig config;
            config.dataDir = m_dir.path();
            config.pluginPaths = {m_dir.path()};  // no plugins: no worker is needed
            config.workspaceDefaults.limits.timeoutMs = kDefaultTimeoutMs;
            auto engine = Engine::open(config);
            QVERIFY2(engine, engine ? "" : qPrintable(engine.error().message));
            m_engine = std::move(*engine);
            m_client = std::make_unique<gui::InProcessEngine>(*m_engine);
            return;
        }
        QVERIFY(m_dir.isValid());
        QVERIFY2(m_server.start({QStringLiteral("--warm-pool"), QStringLiteral("0"),
                                 QStringLiteral("--workspace-defaults"),
                                 QStringLiteral(R"({"limits":{"timeout_ms":%1}})").arg(kDefaultTimeoutMs)}),
                 qPrintable(m_server.error()));
        QString why;
        m_client = gui::connectedTo(m_server, &why, kTimeout);
        QVERIFY2(m_client, qPrintable(why));
    }
    ~Backend()
    {
        m_client.reset();
        m_engine.reset();
    }

    bool ready() const { return m_client != nullptr; }
    gui::EngineClient &client() { return *m_client; }

    bool createWorkspace(const QString &name, const QByteArray &settings)
    {
        const QJsonObject json = QJsonDocument::fromJson(settings).object();
        if (m_engine)
            return bool(m_engine->workspaces().create(name, {}, json));
        return api().post(QStringLiteral("/v1/workspaces"),
                          {{QStringLiteral("name"), name}, {QStringLiteral("settings"), json}}).status == 201;
    }
    // The workspace's effective settings, as the engine says them.
    std::optional<WorkspaceSettings> settings(const QString &name)
    {
        if (m_engine) {
            auto settings = m_engine->workspaces().settings(name);
            return settings ? std::optional(*settings) : std::nullopt;
        }
        const ApiClient::Response answer = api().get(QStringLiteral("/v1/workspaces/") + name);
        if (answer.status != 200)
            return std::nullopt;
        auto settings = WorkspaceSettings::fromJson(
                answer.object().value(QLatin1String("settings")).toObject(), WorkspaceSettings());
        return settings ? std::optional(*settings) : std::nullopt;
    }
    // The workspace's own settings as stored (what it set, not the defaults). A server's store
    // is read once it has stopped: call last.
    QJsonObject stored(const QString &name)
    {
        std::unique_ptr<storage::Store> store;
        storage::Store *read = nullptr;
        if (m_engine) {
            read = &m_engine->store();
        } else {
            m_client.reset();
            if (m_server.stop() != 0)
                return {};
            auto opened = storage::Store::open(QDir(m_server.dataDir()).filePath(QStringLiteral("replhost.db")));
            if (!opened)
                return {};
            store = std::move(*opened);
            read = store.get();
        }
        auto record = read->workspaceByName(name);
        if (!record || !record->has_value())
            return {};
        return QJsonDocument::fromJson((*record)->settings.toUtf8()).object();
    }

private:
    ApiClient api() const { return ApiClient(m_server.port(), m_server.token()); }

    QTemporaryDir m_dir;
    std::unique_ptr<Engine> m_engine;
    ServerProcess m_server;
    std::unique_ptr<gui::EngineClient> m_client;
};

// Waits until the dialog has read the settings (at once in this process).
bool loaded(WorkspaceSettingsDialog &dialog)
{
    return QTest::qWaitFor([&dialog] { return dialog.isLoaded() || !dialog.errorText().isEmpty(); }, kTimeout)
           && dialog.isLoaded();
}

// Presses OK and waits for the engine's answer.
bool accepted(WorkspaceSettingsDialog &dialog)
{
    QSignalSpy applied(&dialog, &WorkspaceSettingsDialog::applied);
    dialog.accept();
    if (applied.isEmpty() && !applied.wait(kTimeout))
        return false;
    return applied.first().first().toBool();
}

} // namespace

class WorkspaceSettingsDialogTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Backend> m_backend;

    static void backends()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("in-process") << QStringLiteral("in-process");
        QTest::newRow("http") << QStringLiteral("http");
    }

private slots:
    void init()
    {
        QFETCH(QString, kind);
        m_backend = std::make_unique<Backend>(kind);
        QVERIFY(m_backend->ready());
        QVERIFY(m_backend->createWorkspace(QStringLiteral("w"), R"({"limits":{"max_contexts":5},"network":false})"));
    }

    void cleanup()
    {
        m_backend.reset();
    }

    void showsTheEffectiveSettings_data() { backends(); }
    void showsTheEffectiveSettings()
    {
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("w"));
        QVERIFY2(loaded(dialog), qPrintable(dialog.errorText()));
        QCOMPARE(dialog.findChild<QSpinBox *>(QStringLiteral("max_contexts"))->value(), 5);
        QCOMPARE(dialog.findChild<QSpinBox *>(QStringLiteral("timeout_ms"))->value(), 90000);
        QCOMPARE(dialog.findChild<QDoubleSpinBox *>(QStringLiteral("output_bytes"))->value(),
                 16.0 * 1024 * 1024);
        auto *memory = dialog.findChild<QDoubleSpinBox *>(QStringLiteral("memory_bytes"));
        QCOMPARE(memory->value(), 0.0);
        QCOMPARE(memory->text(), QStringLiteral("no limit"));
        QVERIFY(!dialog.findChild<QCheckBox *>(QStringLiteral("network"))->isChecked());
        QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("isolation"))->currentData().toString(),
                 QStringLiteral("none"));
    }

    void acceptSendsOnlyTheChangedFields_data() { backends(); }
    void acceptSendsOnlyTheChangedFields()
    {
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("w"));
        QVERIFY2(loaded(dialog), qPrintable(dialog.errorText()));
        dialog.findChild<QSpinBox *>(QStringLiteral("max_contexts"))->setValue(3);
        dialog.findChild<QDoubleSpinBox *>(QStringLiteral("memory_bytes"))->setValue(1 << 30);
        auto *isolation = dialog.findChild<QComboBox *>(QStringLiteral("isolation"));
        isolation->setCurrentIndex(isolation->findData(QStringLiteral("sandbox")));
        dialog.open();
        QVERIFY2(accepted(dialog), qPrintable(dialog.errorText()));
        QCOMPARE(dialog.result(), int(QDialog::Accepted));

        auto settings = m_backend->settings(QStringLiteral("w"));
        QVERIFY(settings);
        QCOMPARE(settings->limits.maxContexts, 3);
        QCOMPARE(settings->limits.memoryBytes, qint64(1) << 30);
        QCOMPARE(settings->isolation, WorkspaceSettings::Isolation::Sandbox);
        QVERIFY(!settings->network);
        // The timeout was not touched: it still follows the server's default, not a copy of it.
        QCOMPARE(m_backend->stored(QStringLiteral("w")),
                 QJsonDocument::fromJson(R"({"limits":{"max_contexts":3,"memory_bytes":1073741824},
                                            "network":false,"isolation":"sandbox"})").object());
    }

    void cpuRateIsALimitInMillicores_data() { backends(); }
    void cpuRateIsALimitInMillicores()
    {
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("w"));
        QVERIFY2(loaded(dialog), qPrintable(dialog.errorText()));
        auto *cpu = dialog.findChild<QSpinBox *>(QStringLiteral("cpu_millicores"));
        QVERIFY(cpu);
        QCOMPARE(cpu->text(), QStringLiteral("no limit"));
        cpu->setValue(500);
        dialog.open();
        // Where no cpu cgroup can be made the engine refuses a rate it cannot hold, and the
        // dialog stays open with its reason (GET /v1/info says which machine this is).
        const bool enforceable = core::WorkerConfinement::enforcement()
                                         .value(QLatin1String("cpu_millicores")).toObject()
                                         .value(QLatin1String("mechanism")).toString()
                                 != QLatin1String("not enforced");
        if (!enforceable) {
            QVERIFY(!accepted(dialog));
            QVERIFY2(dialog.errorText().contains(QLatin1String("cpu_millicores")),
                     qPrintable(dialog.errorText()));
            QVERIFY(dialog.isVisible());
            QCOMPARE(m_backend->settings(QStringLiteral("w"))->limits.cpuMillicores, 0);
            return;
        }
        QVERIFY2(accepted(dialog), qPrintable(dialog.errorText()));
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(m_backend->settings(QStringLiteral("w"))->limits.cpuMillicores, 500);
    }

    // A sandbox's view path is edited only while the isolation is "sandbox"; leaving the sandbox
    // drops it, as the engine keeps no view without one.
    void viewPathFollowsTheSandbox_data() { backends(); }
    void viewPathFollowsTheSandbox()
    {
        QVERIFY(m_backend->createWorkspace(QStringLiteral("s"), R"({"isolation":"sandbox","view_path":"/home/user"})"));
        {
            WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("s"));
        QVERIFY2(loaded(dialog), qPrintable(dialog.errorText()));
            auto *view = dialog.findChild<QLineEdit *>(QStringLiteral("view_path"));
            QVERIFY(view);
            QCOMPARE(view->text(), QStringLiteral("/home/user"));
            QVERIFY(view->isEnabled());
            view->setText(QStringLiteral("/workspace"));
            dialog.open();
            QVERIFY2(accepted(dialog), qPrintable(dialog.errorText()));
            QCOMPARE(dialog.result(), int(QDialog::Accepted));
            QCOMPARE(m_backend->settings(QStringLiteral("s"))->viewPath,
                     QStringLiteral("/workspace"));
        }
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("s"));
        QVERIFY2(loaded(dialog), qPrintable(dialog.errorText()));
        auto *view = dialog.findChild<QLineEdit *>(QStringLiteral("view_path"));
        auto *isolation = dialog.findChild<QComboBox *>(QStringLiteral("isolation"));
        isolation->setCurrentIndex(isolation->findData(QStringLiteral("none")));
        QVERIFY(!view->isEnabled());
        dialog.open();
        QVERIFY2(accepted(dialog), qPrintable(dialog.errorText()));
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        const auto settings = m_backend->settings(QStringLiteral("s"));
        QCOMPARE(settings->isolation, WorkspaceSettings::Isolation::None);
        QVERIFY(settings->viewPath.isEmpty());
        QVERIFY(!m_backend->stored(QStringLiteral("s")).contains(QLatin1String("view_path")));
    }

    void refusedViewPathNamesTheField_data() { backends(); }
    void refusedViewPathNamesTheField()
    {
        QVERIFY(m_backend->createWorkspace(QStringLiteral("s"), R"({"isolation":"sandbox"})"));
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("s"));
        QVERIFY2(loaded(dialog), qPrintable(dialog.errorText()));
        dialog.findChild<QLineEdit *>(QStringLiteral("view_path"))->setText(QStringLiteral("home/user"));
        dialog.open();
        QVERIFY(!accepted(dialog));
        QVERIFY(dialog.isVisible());
        QVERIFY2(dialog.errorText().contains(QStringLiteral("view_path")), qPrintable(dialog.errorText()));
    }

    void refusedValueKeepsTheDialogOpenWithTheEnginesMessage_data() { backends(); }
    void refusedValueKeepsTheDialogOpenWithTheEnginesMessage()
    {
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("w"));
        QVERIFY2(loaded(dialog), qPrintable(dialog.errorText()));
        dialog.findChild<QDoubleSpinBox *>(QStringLiteral("memory_bytes"))->setValue(4096);
        dialog.open();
        QVERIFY(!accepted(dialog));
        QVERIFY(dialog.isVisible());
        QVERIFY2(dialog.errorText().contains(QStringLiteral("limits.memory_bytes")),
                 qPrintable(dialog.errorText()));
        auto settings = m_backend->settings(QStringLiteral("w"));
        QVERIFY(settings);
        QCOMPARE(settings->limits.memoryBytes, 0);

        // Corrected, it goes through and the message goes away.
        dialog.findChild<QDoubleSpinBox *>(QStringLiteral("memory_bytes"))->setValue(1 << 20);
        QVERIFY(accepted(dialog));
        QVERIFY(!dialog.isVisible());
        QVERIFY(dialog.errorText().isEmpty());
        QCOMPARE(m_backend->settings(QStringLiteral("w"))->limits.memoryBytes,
                 qint64(1) << 20);
    }

    // A server answers later: until it has, nothing can be edited or sent, and the dialog says
    // it is loading.
    void fieldsWaitForTheSettings_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("http") << QStringLiteral("http");
    }
    void fieldsWaitForTheSettings()
    {
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("w"));
        dialog.show();
        auto *contexts = dialog.findChild<QSpinBox *>(QStringLiteral("max_contexts"));
        auto *ok = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        auto *status = dialog.findChild<QLabel *>(QStringLiteral("status"));
        QVERIFY(!dialog.isLoaded());
        QVERIFY(!contexts->isEnabled());
        QVERIFY(!dialog.findChild<QComboBox *>(QStringLiteral("isolation"))->isEnabled());
        QVERIFY(!ok->isEnabled());
        QVERIFY(status->isVisible());

        QSignalSpy loadedSpy(&dialog, &WorkspaceSettingsDialog::loaded);
        QVERIFY(loadedSpy.wait(kTimeout));
        QCOMPARE(loadedSpy.first().first().toBool(), true);
        QVERIFY(contexts->isEnabled());
        QCOMPARE(contexts->value(), 5);
        QVERIFY(ok->isEnabled());
        QVERIFY(!status->isVisible());
    }

    // A workspace the engine does not know: its message, and nothing to send.
    void unknownWorkspaceSaysSo_data() { backends(); }
    void unknownWorkspaceSaysSo()
    {
        WorkspaceSettingsDialog dialog(m_backend->client(), QStringLiteral("nowhere"));
        dialog.show();
        QVERIFY(QTest::qWaitFor([&dialog] { return !dialog.errorText().isEmpty(); }, kTimeout));
        QVERIFY(!dialog.isLoaded());
        QVERIFY2(dialog.errorText().contains(QStringLiteral("nowhere")), qPrintable(dialog.errorText()));
        QVERIFY(!dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->isEnabled());
        QVERIFY(!dialog.findChild<QSpinBox *>(QStringLiteral("max_contexts"))->isEnabled());
        dialog.accept();
        QVERIFY(dialog.isVisible());
    }
};

QTEST_MAIN(WorkspaceSettingsDialogTest)
#include "tst_workspacesettingsdialog.moc"
