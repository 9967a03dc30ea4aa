// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

#include <QMetaObject>
#include <QWidget>

class QLabel;
class QLineEdit;

namespace replhost::gui {

// The line under the output where a run's question is answered. It follows one execution at a
// time: when the run asks (an input_request event) it appears with the question's prompt, takes
// the focus, and Enter sends what was typed as the answer (EngineClient::answerInput); Ctrl+D
// on an empty line answers with the end of input. A password's line shows no characters, and
// the answer is kept nowhere here. It hides again once the question is answered, or when the
// run ends without an answer (interrupted, timed out).
//
// Threading: the GUI thread. The engine client outlives it.
class InputLine : public QWidget {
    Q_OBJECT
public:
    explicit InputLine(EngineClient &engine, QWidget *parent = nullptr);

    // Shows the questions of the context `contextId` (empty: none): of the execution of
    // `transcript` that has not finished yet, if any, and of every execution of the context
    // that starts from now on (the engine runs one at a time per context).
    void showContext(const QString &contextId, const QList<core::ExecutionPtr> &transcript);
    // Follows `execution` from now on (null: none), hidden until it asks; a question it is
    // already waiting for is shown at once.
    void follow(const core::ExecutionPtr &execution);
    const core::ExecutionPtr &followed() const { return m_execution; }

signals:
    // An answer was sent (for the window to give the focus back where it was).
    void answered();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void onEvent(const replhost::sdk::Event &event);
    void ask(const QString &prompt, bool password);
    void send(bool eof);
    void stop();

    EngineClient &m_engine;
    QString m_contextId;
    core::ExecutionPtr m_execution;
    QMetaObject::Connection m_events;
    QMetaObject::Connection m_finished;
    QLabel *m_prompt;
    QLineEdit *m_line;
    QLabel *m_problem;
};

} // namespace replhost::gui
