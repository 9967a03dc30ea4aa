// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "filework.h"

#include "core/workspacefiles.h"

#include <QString>

#include <memory>
#include <optional>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;

// The file routes of OpenSandbox's execd API, as its SDKs' `files` service calls them, for every
// workspace under /opensandbox/execd/{ws} (beside OpenSandboxExecdApi):
//
//   GET /files/info?path=…              {"<path>": FileInfo} (path repeatable)
//   DELETE /files?path=…                files (path repeatable)
//   POST /files/permissions             {"<path>": {"mode": 644, "owner", "group"}}
//   POST /files/mv                      [{"src", "dest"}] (an existing dest file is replaced)
//   GET /files/search?path=&pattern=    [FileInfo] whose names match the glob (default "**")
//   POST /files/replace[?verbose=true]  {"<path>": {"old", "new"}}
//   POST /files/upload                  multipart: a "metadata" part {"path", "mode"?} then a
//                                       "file" part, as many pairs as wanted
//   GET /files/download?path=           the bytes (a single Range is honoured)
//   GET /directories/list?path=&depth=  [FileInfo] down to `depth` levels (default 1)
//   POST /directories                   {"<path>": {"mode"}} (parents are created)
//   DELETE /directories?path=…          directories with their contents (path repeatable)
//
// FileInfo = {"path" (absolute), "type", "size", "modified_at", "created_at", "owner", "group",
// "mode" (octal digits read as decimal, 755, as execd has it)}. Paths are relative to the
// workspace directory or absolute inside it, and confined to it by core::WorkspaceFiles: a
// replhost workspace is a directory, not a container with its own root, so "/tmp/x" is refused
// (403) rather than written outside. Owners and groups other than the server's user cannot be
// set (400 NOT_SUPPORTED). Empty successes are 200 with Content-Length: 0. Only regular files
// are read or written: a FIFO, a socket or a device is 400 INVALID_REQUEST_BODY. The file
// system is touched on FileWork threads only, and a replace streams each file.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class OpenSandboxFilesApi {
public:
    explicit OpenSandboxFilesApi(core::Engine &engine);

    void registerRoutes(Router &router);

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void info(const ExchangePtr &exchange);
    void removeFiles(const ExchangePtr &exchange);
    void setPermissions(const ExchangePtr &exchange);
    void move(const ExchangePtr &exchange);
    void search(const ExchangePtr &exchange);
    void replace(const ExchangePtr &exchange);
    void upload(const ExchangePtr &exchange);
    void download(const ExchangePtr &exchange);
    void listDirectory(const ExchangePtr &exchange);
    void makeDirectories(const ExchangePtr &exchange);
    void removeDirectories(const ExchangePtr &exchange);

    // The route's workspace files, or nothing after answering 404.
    std::optional<core::WorkspaceFiles> filesOf(HttpExchange &exchange) const;

    core::Engine &m_engine;
    FileWork m_work;
};

} // namespace replhost::http
