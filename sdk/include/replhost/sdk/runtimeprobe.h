// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/languagehandler.h"
#include "replhost/sdk/result.h"
#include "replhost/sdk/sdk_export.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

// Helpers for LanguageHandler::probe(): every handler finds its runtime the same way, so users
// configure every language the same way and read the same kind of message when one is missing.
namespace replhost::sdk {

// Where a runtime program comes from, first match wins: the language's "interpreter" setting,
// then the environment variable `envVar`, then `defaultProgram` on PATH. A setting or variable
// holding a name (no '/') is looked up on PATH too.
struct RuntimeLookup {
    QString language;        // for messages: "python"
    QString defaultProgram;  // "python3"
    QString envVar;          // "REPLHOST_PYTHON"
    QString installHint;     // "install python3"
};

// The absolute path of the program to run, or an error whose message says what is missing and
// what to install or set ("python3 not found on PATH; install python3 or set REPLHOST_PYTHON").
// Thread-safe; touches only the file system.
REPLHOST_SDK_EXPORT Result<QString> locateRuntime(const RuntimeLookup &lookup,
                                                  const QJsonObject &settings);

// Runs `program` with `arguments` (no shell, stdin on /dev/null) and returns its standard output
// when it exits with status 0 within `timeoutMs`. Otherwise the error message names the program
// and what happened, with the first and last lines of its standard error.
// Blocks the calling thread for at most `timeoutMs` (plus the time to kill the program).
REPLHOST_SDK_EXPORT Result<QByteArray> runProbeCommand(const QString &program,
                                                       const QStringList &arguments,
                                                       int timeoutMs);

// A RuntimeInfo that says the runtime cannot be used, and why.
REPLHOST_SDK_EXPORT RuntimeInfo unavailableRuntime(const QString &reason);

} // namespace replhost::sdk
