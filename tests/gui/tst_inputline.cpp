// SPDX-License-Identifier: Apache-2.0
// The input line under the output, over a real Engine and real Python workers, under the
// offscreen platform: it appears with the run's prompt, Enter answers, a password's characters
// are not shown and its answer is not recorded, Ctrl+D is the end of input, and an interrupt
// hides it with the state kept.

#include "gui/inprocessengine.h"
#include "gui/inputline.h"

#include "core/engine.h"

#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace replhost;

namespace {

constexpr int kRunTimeout = 60000;

QString stdoutOf(const core::Execution &execution)
{
    QString text;
    for (const sdk::Event &event : execution.events())
        if (event.kind == sdk::Event::Kind::Stream
            && event.fields.value(QLatin1String("name")).toString() == QLatin1String("stdout"))
            text += event.fields.value(QLatin1String("text")).toString();
    return text;
}

} // namespace

class tst_InputLine : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void appearsWithThePromptAndEnterAnswers();
    void passwordIsHiddenAndNotRecorded();
    void ctrlDIsTheEndOfInput();
    void interruptHidesItAndKeepsState();

private:
    // Runs `code` in the context with "input": true, as the window does, shown by the line.
    core::ExecutionPtr run(const QString &code);
    QLineEdit *text() const { return m_line->findChild<QLineEdit *>(QStringLiteral("inputText")); }
    QLabel *prompt() const { return m_line->findChild<QLabel *>(QStringLiteral("inputPrompt")); }

    std::unique_ptr<QTemporaryDir> m_dataDir;
    std::unique_ptr<core::Engine> m_engine;
    std::unique_ptr<gui::InProcessEngine> m_client;
    std::unique_ptr<QWidget> m_window;
    gui::InputLine *m_line = nullptr;
    QString m_contextId;
};

void tst_InputLine::init()
{
    m_dataDir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dataDir->isValid());
    core::EngineConfig config;
    config.dataDir = m_dataDir->path();
    config.pluginPaths = {QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)};
    config.warmPoolSize = 0;
    auto engine = core::Engine::open(config);
    QVERIFY2(engine, engine ? "" : qPrintable(engine.error().message));
    m_engine = std::move(*engine);
    core::CreateContextRequest request;
    request.language = QStringLiteral("python");
    const auto context = m_engine->contexts().create(request);
    QVERIFY2(context, context ? "" : qPrintable(context.error().message));
    m_contextId = context->id;
    m_window = std::make_unique<QWidget>();
    m_client = std::make_unique<gui::InProcessEngine>(*m_engine);
    m_line = new gui::InputLine(*m_client, m_window.get());
    m_line->showContext(m_contextId, {});
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void tst_InputLine::cleanup()
{
    m_window.reset();
    m_client.reset();
    m_engine.reset();
    m_dataDir.reset();
}

core::ExecutionPtr tst_InputLine::run(const QString &code)
{
    core::RunRequest request;
    request.contextId = m_contextId;
    request.code = code;
    request.input = true;
    const auto started = m_engine->contexts().run(request);
    if (!started) {
        qWarning() << "run:" << started.error().message;
        return nullptr;
    }
    return *started;
}

void tst_InputLine::appearsWithThePromptAndEnterAnswers()
{
    QVERIFY(!m_line->isVisible());
    const core::ExecutionPtr execution = run(QStringLiteral("name = input('Name? ')\nprint('hello', name)"));
    QVERIFY(execution);
    QTRY_VERIFY_WITH_TIMEOUT(m_line->isVisible(), kRunTimeout);
    QCOMPARE(prompt()->text(), QStringLiteral("Name? "));
    QCOMPARE(text()->echoMode(), QLineEdit::Normal);
    QTest::keyClicks(text(), QStringLiteral("Ada"));
    QTest::keyClick(text(), Qt::Key_Return);
    QVERIFY(!m_line->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(execution->isFinished(), kRunTimeout);
    QCOMPARE(execution->status(), QStringLiteral("ok"));
    QCOMPARE(stdoutOf(*execution), QStringLiteral("hello Ada\n"));
}

void tst_InputLine::passwordIsHiddenAndNotRecorded()
{
    const core::ExecutionPtr execution =
            run(QStringLiteral("import getpass\nprint(len(getpass.getpass()))"));
    QVERIFY(execution);
    QTRY_VERIFY_WITH_TIMEOUT(m_line->isVisible(), kRunTimeout);
    QCOMPARE(text()->echoMode(), QLineEdit::Password);
    QTest::keyClicks(text(), QStringLiteral("hunter2"));
    QTest::keyClick(text(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(execution->isFinished(), kRunTimeout);
    QCOMPARE(stdoutOf(*execution), QStringLiteral("7\n"));
    QVERIFY(text()->text().isEmpty());
    for (const sdk::Event &event : execution->events())
        QVERIFY(!QJsonDocument(event.toJson()).toJson().contains("hunter2"));
}

void tst_InputLine::ctrlDIsTheEndOfInput()
{
    const core::ExecutionPtr execution =
            run(QStringLiteral("try:\n    input()\nexcept EOFError:\n    print('eof')"));
    QVERIFY(execution);
    QTRY_VERIFY_WITH_TIMEOUT(m_line->isVisible(), kRunTimeout);
    QTest::keyClick(text(), Qt::Key_D, Qt::ControlModifier);
    QTRY_VERIFY_WITH_TIMEOUT(execution->isFinished(), kRunTimeout);
    QCOMPARE(stdoutOf(*execution), QStringLiteral("eof\n"));
}

void tst_InputLine::interruptHidesItAndKeepsState()
{
    const core::ExecutionPtr setup = run(QStringLiteral("kept = 41"));
    QVERIFY(setup);
    QTRY_VERIFY_WITH_TIMEOUT(setup->isFinished(), kRunTimeout);
    const core::ExecutionPtr execution = run(QStringLiteral("input('? ')"));
    QVERIFY(execution);
    QTRY_VERIFY_WITH_TIMEOUT(m_line->isVisible(), kRunTimeout);
    QVERIFY(m_engine->contexts().interruptExecution(execution->id()));
    QTRY_VERIFY_WITH_TIMEOUT(execution->isFinished(), kRunTimeout);
    QCOMPARE(execution->status(), QStringLiteral("interrupted"));
    QVERIFY(!m_line->isVisible());
    const core::ExecutionPtr check = run(QStringLiteral("print(kept + 1)"));
    QVERIFY(check);
    QTRY_VERIFY_WITH_TIMEOUT(check->isFinished(), kRunTimeout);
    QCOMPARE(stdoutOf(*check), QStringLiteral("42\n"));
}

QTEST_MAIN(tst_InputLine)
#include "tst_inputline.moc"
