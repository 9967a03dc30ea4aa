// SPDX-License-Identifier: Apache-2.0
#include "loopturn.h"

#include <QAbstractEventDispatcher>
#include <QPointer>
#include <QThread>

#include <algorithm>
#include <utility>

namespace replhost::sdk {

LoopTurn *LoopTurn::current()
{
    // Cleared when the dispatcher, and with it the LoopTurn, goes (the thread ends).
    static thread_local QPointer<LoopTurn> instance;
    if (instance)
        return instance;
    QAbstractEventDispatcher *dispatcher = QAbstractEventDispatcher::instance(QThread::currentThread());
    if (!dispatcher)
        return nullptr;
    instance = new LoopTurn(dispatcher);
    return instance;
}

LoopTurn::LoopTurn(QAbstractEventDispatcher *dispatcher) : QObject(dispatcher)
{
    connect(dispatcher, &QAbstractEventDispatcher::aboutToBlock, this, &LoopTurn::run);
    connect(dispatcher, &QAbstractEventDispatcher::awake, this, &LoopTurn::run);
}

void LoopTurn::schedule(Client *client)
{
    if (std::find(m_waiting.begin(), m_waiting.end(), client) == m_waiting.end())
        m_waiting.push_back(client);
}

void LoopTurn::cancel(Client *client)
{
    std::erase(m_waiting, client);
    std::replace(m_running.begin(), m_running.end(), client, static_cast<Client *>(nullptr));
}

void LoopTurn::run()
{
    if (m_waiting.empty() || !m_running.empty())
        return;  // nothing asked for, or a turn run from inside a callback (a nested loop)
    // Clients scheduled by the callbacks wait for the next turn.
    m_running.swap(m_waiting);
    for (std::size_t i = 0; i < m_running.size(); ++i) {
        // A callback may cancel (destroy) clients further down the list.
        if (Client *client = std::exchange(m_running[i], nullptr))
            client->onLoopTurn();
    }
    m_running.clear();
}

} // namespace replhost::sdk
