// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>

namespace replhost::http {

// A ready-to-paste shell walk-through of the native API (create a Python context or name one,
// run code in it, stream a run), shown by both faces: replhost-server prints it, the workbench's server panel
// offers it for copying. Pure functions; any thread.
class CurlExample {
public:
    // Lines ending in '\n', each indented by `indent`. `baseUrl` as ApiServer::baseUrl().
    // `token` is put after "TOKEN=" as it is: the token itself, or shell that reads it
    // ("$(cat ~/.local/share/replhost/token)").
    // With `contextId`, the example runs in that Python context of `workspace` (empty or
    // "default": the short paths) instead of creating one at every paste.
    static QString python(const QString &baseUrl, const QString &token,
                          const QString &indent = QString(), const QString &workspace = QString(),
                          const QString &contextId = QString());
};

} // namespace replhost::http
