// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "filework.h"

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;

// The files of a workspace over HTTP (docs/http-api.md, "Files"): list a directory, read a file
// (with Range), write one (raw body, or several as multipart/form-data), delete, move, mkdir.
// Paths travel in the `path` query parameter (or the JSON body for move and mkdir) and are
// confined to the workspace by core::WorkspaceFiles: escaping paths are answered 403, and
// anything but a regular file (a FIFO, a socket, a device, a symlink at the end of the path) is
// neither read nor written (400). The file system is touched on FileWork threads only: the
// handlers look the workspace up, hand the work over and answer when it is done.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class FilesApi {
public:
    explicit FilesApi(core::Engine &engine);

    void registerRoutes(Router &router);

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void list(const ExchangePtr &exchange);
    void read(const ExchangePtr &exchange);
    void write(const ExchangePtr &exchange);
    void upload(const ExchangePtr &exchange);
    void remove(const ExchangePtr &exchange);
    void move(const ExchangePtr &exchange);
    void makeDirectory(const ExchangePtr &exchange);

    core::Engine &m_engine;
    FileWork m_work;
};

} // namespace replhost::http
