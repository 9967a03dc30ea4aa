// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

namespace replhost::python {

// CPython (3.8 or newer) as a replhost language: driver.py, embedded as a resource, runs in a
// worker process started from the interpreter that probe() resolved.
//
// Settings (the "python" object of the host's language settings):
//   interpreter  program to use, a path or a name looked up on PATH; else $REPLHOST_PYTHON,
//                else python3 on PATH
//   isolated     true to start the interpreter with -I (ignores PYTHONPATH and the user's
//                site-packages); default false, like a Jupyter kernel
//   jedi         false to complete from the namespace only, even when jedi is installed
class PythonHandler : public QObject, public sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "python.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;
};

} // namespace replhost::python
