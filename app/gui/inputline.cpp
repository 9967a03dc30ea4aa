// SPDX-License-Identifier: Apache-2.0
#include "inputline.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>

namespace replhost::gui {

InputLine::InputLine(EngineClient &engine, QWidget *parent)
    : QWidget(parent), m_engine(engine), m_prompt(new QLabel(this)), m_line(new QLineEdit(this)),
      m_problem(new QLabel(this))
{
    setObjectName(QStringLiteral("inputLine"));
    m_prompt->setObjectName(QStringLiteral("inputPrompt"));
    m_prompt->setTextFormat(Qt::PlainText);
    m_line->setObjectName(QStringLiteral("inputText"));
    m_line->setPlaceholderText(tr("The run waits for input: type the answer and press Enter (Ctrl+D: end of input)"));
    m_line->installEventFilter(this);
    m_problem->setObjectName(QStringLiteral("inputProblem"));
    m_problem->setTextFormat(Qt::PlainText);
    m_problem->hide();
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 3, 6, 3);
    layout->addWidget(m_prompt);
    layout->addWidget(m_line, 1);
    layout->addWidget(m_problem);
    connect(m_line, &QLineEdit::returnPressed, this, [this] { send(false); });
    connect(&m_engine, &EngineClient::executionStarted, this, [this](const core::ExecutionPtr &execution) {
        if (!m_contextId.isEmpty() && execution->contextId() == m_contextId)
            follow(execution);
    });
    hide();
}

void InputLine::showContext(const QString &contextId, const QList<core::ExecutionPtr> &transcript)
{
    m_contextId = contextId;
    core::ExecutionPtr running;
    for (const core::ExecutionPtr &execution : transcript) {
        if (execution->contextId() == contextId && !execution->isFinished()
            && execution->status() != QLatin1String("queued")) {
            running = execution;
            break;
        }
    }
    follow(running);
}

void InputLine::follow(const core::ExecutionPtr &execution)
{
    stop();
    m_execution = execution;
    if (!execution)
        return;
    m_events = connect(execution.get(), &core::Execution::eventAdded, this,
                       [this](const sdk::Event &event, int) { onEvent(event); });
    m_finished = connect(execution.get(), &core::Execution::finished, this, [this] { stop(); });
    if (execution->isWaitingForInput()) {
        // Its question came before this line followed it: find the prompt among its events.
        const QList<sdk::Event> &events = execution->events();
        for (auto it = events.crbegin(); it != events.crend(); ++it) {
            if (it->kind == sdk::Event::Kind::InputRequest) {
                ask(it->fields.value(QLatin1String("prompt")).toString(),
                    it->fields.value(QLatin1String("password")).toBool());
                break;
            }
        }
    }
}

void InputLine::onEvent(const sdk::Event &event)
{
    if (event.kind == sdk::Event::Kind::InputRequest)
        ask(event.fields.value(QLatin1String("prompt")).toString(),
            event.fields.value(QLatin1String("password")).toBool());
    else if (event.type == QLatin1String("input_reply"))
        hide();
}

void InputLine::ask(const QString &prompt, bool password)
{
    m_prompt->setText(prompt);
    m_prompt->setVisible(!prompt.isEmpty());
    m_line->clear();
    m_line->setEchoMode(password ? QLineEdit::Password : QLineEdit::Normal);
    m_problem->hide();
    show();
    m_line->setFocus();
}

void InputLine::send(bool eof)
{
    if (!m_execution || !isVisible())
        return;
    const QString value = eof ? QString() : m_line->text();
    m_line->clear();
    QPointer<InputLine> self(this);
    const core::ExecutionPtr asked = m_execution;
    m_engine.answerInput(m_execution->id(), value, eof, [self, asked](Result<void> sent) {
        if (!self || self->m_execution != asked)
            return;  // it follows another run by now
        if (!sent) {
            self->m_problem->setText(sent.error().message);
            self->m_problem->show();
            return;
        }
        self->hide();
        emit self->answered();
    });
}

void InputLine::stop()
{
    disconnect(m_events);
    disconnect(m_finished);
    m_execution.reset();
    m_line->clear();
    hide();
}

bool InputLine::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_line && event->type() == QEvent::KeyPress) {
        const auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_D && key->modifiers() == Qt::ControlModifier && m_line->text().isEmpty()) {
            send(true);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace replhost::gui
