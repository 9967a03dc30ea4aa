// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "filework.h"

#include <QtGlobal>

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;

// A workspace as a tar archive (core::WorkspaceArchive), which is how it moves between servers:
//
//   GET /v1/workspaces/{ws}/archive   the archive (application/x-tar)
//   PUT /v1/workspaces/{ws}/archive   the body, an archive, becomes the new workspace {ws}
//                                     (201; 409 when it exists; 400 for a body that is not an
//                                     archive of a workspace)
//
// Both name the workspace in the path, so a router places them like every other route of that
// workspace. The history writer is flushed before an export, so every run that has ended is in
// it. An archive holds at most `maxBytes` of files (the server's body limit, so that what one
// server exports another with the same limit imports): past it the export is 413. An import
// makes the workspace with the archive's settings (refused whole when this server cannot honour
// them), writes its files, then its rows in one transaction, and removes what it made if a
// step fails. The imported contexts are dormant and restore on first use. The files are read,
// written and (un)packed on FileWork threads.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class WorkspaceArchiveApi {
public:
    WorkspaceArchiveApi(core::Engine &engine, qint64 maxBytes);

    void registerRoutes(Router &router);

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void exportArchive(const ExchangePtr &exchange);
    void importArchive(const ExchangePtr &exchange);

    core::Engine &m_engine;
    const qint64 m_maxBytes;
    FileWork m_work;
};

} // namespace replhost::http
