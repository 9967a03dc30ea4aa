// SPDX-License-Identifier: Apache-2.0
#include "filework.h"

namespace replhost::http {

FileWork::FileWork() : m_receiver(std::make_unique<QObject>())
{
    m_pool.setMaxThreadCount(kThreads);
    m_pool.setObjectName(QStringLiteral("replhost-files"));
}

FileWork::~FileWork()
{
    m_pool.clear();
    m_pool.waitForDone();
}

} // namespace replhost::http
