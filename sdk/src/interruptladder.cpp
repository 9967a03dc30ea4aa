// SPDX-License-Identifier: Apache-2.0
#include "interruptladder.h"

#include <QObject>

#include <utility>

namespace replhost::sdk {

InterruptLadder::InterruptLadder(QObject *context, Steps steps, std::function<void()> signal,
                                 std::function<bool()> running, std::function<void()> kill)
    : m_steps(steps), m_signal(std::move(signal)), m_running(std::move(running))
{
    m_killTimer.setSingleShot(true);
    QObject::connect(&m_repeatTimer, &QTimer::timeout, context, [this] {
        if (!m_running() || m_sent >= m_steps.repeats) {
            m_repeatTimer.stop();
            return;
        }
        m_signal();
        if (++m_sent >= m_steps.repeats)
            m_repeatTimer.stop();
    });
    QObject::connect(&m_killTimer, &QTimer::timeout, context, std::move(kill));
}

void InterruptLadder::begin()
{
    m_signal();
    m_sent = 1;
    if (m_steps.repeats > 1 && m_steps.repeatMs > 0)
        m_repeatTimer.start(m_steps.repeatMs);
    if (m_steps.killMs > 0)
        m_killTimer.start(m_steps.killMs);
}

void InterruptLadder::stop()
{
    m_repeatTimer.stop();
    m_killTimer.stop();
}

} // namespace replhost::sdk
