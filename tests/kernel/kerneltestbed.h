// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "apiclient.h"
#include "jupyterharness.h"
#include "serverprocess.h"

#include <memory>

// What a kernel test runs against: a real replhost-server (port 0, a temporary data dir) and a
// Jupyter home where `replhost-cli kernelspec install` wrote the kernelspecs of every language
// with a runtime here. Threading: the test thread.
class KernelTestBed {
public:
    // Starts both; false with error() set when either could not be set up.
    bool start();
    void stop();
    QString error() const { return m_error; }

    ServerProcess &server() { return *m_server; }
    JupyterHarness &jupyter() { return *m_jupyter; }
    ApiClient client() const { return ApiClient(m_server->port(), m_server->token()); }
    // Why `language` cannot run here (its runtime is missing), or empty.
    QString missingLanguage(const QString &language) const { return client().missingLanguage(language); }

private:
    std::unique_ptr<ServerProcess> m_server;
    std::unique_ptr<JupyterHarness> m_jupyter;
    QString m_error;
};

// QSKIP only leaves the function it is written in, so this is a macro.
#define REQUIRE_KERNEL_LANGUAGE(bed, language)                      \
    do {                                                            \
        const QString whyMissing = (bed).missingLanguage(language); \
        if (!whyMissing.isEmpty())                                  \
            QSKIP(qPrintable(whyMissing));                          \
    } while (false)
