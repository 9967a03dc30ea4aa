// SPDX-License-Identifier: Apache-2.0
// The workspace settings dialog over a real Engine: it shows the effective settings, sends only
// what was changed, and stays open with the engine's message when a value is refused.
#include "gui/workspacesettingsdialog.h"

#include "core/engine.h"
#include "storage/store.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QJsonDocument>
#include <QLineEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace replhost;
using namespace replhost::core;
using replhost::gui::WorkspaceSettingsDialog;

class WorkspaceSettingsDialogTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> m_dataDir;
    std::unique_ptr<Engine> m_engine;

    // The workspace's own settings as stored (what it set, not the defaults).
    QJsonObject stored(const QString &name)
    {
        auto record = m_engine->store().workspaceByName(name);
        if (!record || !record->has_value())
            return {};
        return QJsonDocument::fromJson((*record)->settings.toUtf8()).object();
    }

private slots:
    void init()
    {
        m_dataDir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dataDir->isValid());
        EngineConfig config;
        config.dataDir = m_dataDir->path();
        config.pluginPaths = {m_dataDir->path()};  // no plugins: no worker is needed
        config.workspaceDefaults.limits.timeoutMs = 90000;
        auto engine = Engine::open(config);
        QVERIFY2(engine, engine ? "" : qPrintable(engine.error().message));
        m_engine = std::move(*engine);
        QVERIFY(m_engine->workspaces().create(
            QStringLiteral("w"), {},
            QJsonDocument::fromJson(R"({"limits":{"max_contexts":5},"network":false})").object()));
    }

    void cleanup()
    {
        m_engine.reset();
        m_dataDir.reset();
    }

    void showsTheEffectiveSettings()
    {
        WorkspaceSettingsDialog dialog(*m_engine, QStringLiteral("w"));
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

    void acceptSendsOnlyTheChangedFields()
    {
        WorkspaceSettingsDialog dialog(*m_engine, QStringLiteral("w"));
        dialog.findChild<QSpinBox *>(QStringLiteral("max_contexts"))->setValue(3);
        dialog.findChild<QDoubleSpinBox *>(QStringLiteral("memory_bytes"))->setValue(1 << 30);
        auto *isolation = dialog.findChild<QComboBox *>(QStringLiteral("isolation"));
        isolation->setCurrentIndex(isolation->findData(QStringLiteral("sandbox")));
        dialog.open();
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));

        auto settings = m_engine->workspaces().settings(QStringLiteral("w"));
        QVERIFY(settings);
        QCOMPARE(settings->limits.maxContexts, 3);
        QCOMPARE(settings->limits.memoryBytes, qint64(1) << 30);
        QCOMPARE(settings->isolation, WorkspaceSettings::Isolation::Sandbox);
        QVERIFY(!settings->network);
        // The timeout was not touched: it still follows the server's default, not a copy of it.
        QCOMPARE(stored(QStringLiteral("w")),
                 QJsonDocument::fromJson(R"({"limits":{"max_contexts":3,"memory_bytes":1073741824},
                                            "network":false,"isolation":"sandbox"})").object());
    }

    void cpuRateIsALimitInMillicores()
    {
        WorkspaceSettingsDialog dialog(*m_engine, QStringLiteral("w"));
        auto *cpu = dialog.findChild<QSpinBox *>(QStringLiteral("cpu_millicores"));
        QVERIFY(cpu);
        QCOMPARE(cpu->text(), QStringLiteral("no limit"));
        cpu->setValue(500);
        dialog.open();
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(m_engine->workspaces().settings(QStringLiteral("w"))->limits.cpuMillicores, 500);
    }

    // A sandbox's view path is edited only while the isolation is "sandbox"; leaving the sandbox
    // drops it, as the engine keeps no view without one.
    void viewPathFollowsTheSandbox()
    {
        QVERIFY(m_engine->workspaces().create(
            QStringLiteral("s"), {},
            QJsonDocument::fromJson(R"({"isolation":"sandbox","view_path":"/home/user"})").object()));
        {
            WorkspaceSettingsDialog dialog(*m_engine, QStringLiteral("s"));
            auto *view = dialog.findChild<QLineEdit *>(QStringLiteral("view_path"));
            QVERIFY(view);
            QCOMPARE(view->text(), QStringLiteral("/home/user"));
            QVERIFY(view->isEnabled());
            view->setText(QStringLiteral("/workspace"));
            dialog.open();
            dialog.accept();
            QCOMPARE(dialog.result(), int(QDialog::Accepted));
            QCOMPARE(m_engine->workspaces().settings(QStringLiteral("s"))->viewPath,
                     QStringLiteral("/workspace"));
        }
        WorkspaceSettingsDialog dialog(*m_engine, QStringLiteral("s"));
        auto *view = dialog.findChild<QLineEdit *>(QStringLiteral("view_path"));
        auto *isolation = dialog.findChild<QComboBox *>(QStringLiteral("isolation"));
        isolation->setCurrentIndex(isolation->findData(QStringLiteral("none")));
        QVERIFY(!view->isEnabled());
        dialog.open();
        dialog.accept();
        QVERIFY2(dialog.result() == int(QDialog::Accepted), qPrintable(dialog.errorText()));
        const auto settings = m_engine->workspaces().settings(QStringLiteral("s"));
        QCOMPARE(settings->isolation, WorkspaceSettings::Isolation::None);
        QVERIFY(settings->viewPath.isEmpty());
        QVERIFY(!stored(QStringLiteral("s")).contains(QLatin1String("view_path")));
    }

    void refusedViewPathNamesTheField()
    {
        QVERIFY(m_engine->workspaces().create(QStringLiteral("s"), {},
                                              QJsonDocument::fromJson(R"({"isolation":"sandbox"})").object()));
        WorkspaceSettingsDialog dialog(*m_engine, QStringLiteral("s"));
        dialog.findChild<QLineEdit *>(QStringLiteral("view_path"))->setText(QStringLiteral("home/user"));
        dialog.open();
        dialog.accept();
        QVERIFY(dialog.isVisible());
        QVERIFY2(dialog.errorText().contains(QStringLiteral("view_path")), qPrintable(dialog.errorText()));
    }

    void refusedValueKeepsTheDialogOpenWithTheEnginesMessage()
    {
        WorkspaceSettingsDialog dialog(*m_engine, QStringLiteral("w"));
        dialog.findChild<QDoubleSpinBox *>(QStringLiteral("memory_bytes"))->setValue(4096);
        dialog.open();
        dialog.accept();
        QVERIFY(dialog.isVisible());
        QVERIFY2(dialog.errorText().contains(QStringLiteral("limits.memory_bytes")),
                 qPrintable(dialog.errorText()));
        auto settings = m_engine->workspaces().settings(QStringLiteral("w"));
        QVERIFY(settings);
        QCOMPARE(settings->limits.memoryBytes, 0);

        // Corrected, it goes through and the message goes away.
        dialog.findChild<QDoubleSpinBox *>(QStringLiteral("memory_bytes"))->setValue(1 << 20);
        dialog.accept();
        QVERIFY(!dialog.isVisible());
        QVERIFY(dialog.errorText().isEmpty());
        QCOMPARE(m_engine->workspaces().settings(QStringLiteral("w"))->limits.memoryBytes,
                 qint64(1) << 20);
    }
};

QTEST_MAIN(WorkspaceSettingsDialogTest)
#include "tst_workspacesettingsdialog.moc"
