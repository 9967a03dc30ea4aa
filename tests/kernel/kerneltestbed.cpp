// SPDX-License-Identifier: Apache-2.0
#include "kerneltestbed.h"

bool KernelTestBed::start()
{
    m_server = std::make_unique<ServerProcess>();
    if (!m_server->start()) {
        m_error = m_server->error();
        return false;
    }
    m_jupyter = std::make_unique<JupyterHarness>(m_server->dataDir());
    if (m_jupyter->installKernelspecs({}).isEmpty()) {
        m_error = QStringLiteral("replhost-cli kernelspec install wrote no kernelspec");
        return false;
    }
    return true;
}

void KernelTestBed::stop()
{
    if (m_server)
        m_server->stop();
}
