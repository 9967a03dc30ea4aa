// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "filework.h"
#include "mcptool.h"

#include <QJsonObject>
#include <QList>

#include <functional>

namespace replhost::core { class Engine; }

namespace replhost::http {

// Workspace files for MCP clients: the tools list_files, read_file and write_file, and the files
// as MCP resources (resources/list, resources/read, resources/templates/list), so that an agent
// can attach one. A file's URI is replhost://workspaces/<workspace>/files/<path>, each segment
// percent-encoded.
//
// Paths are confined to the workspace by core::WorkspaceFiles (what escapes is refused, only
// regular files are read or written), and the file system is touched on FileWork threads only,
// never on the engine thread that answers every client.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class McpFiles {
public:
    explicit McpFiles(core::Engine &engine);

    QList<McpTool> tools();

    // The complete JSON-RPC response, once, later.
    using Respond = std::function<void(const QJsonObject &response)>;
    void listResources(const QJsonValue &id, const QJsonObject &params, Respond respond);
    void readResource(const QJsonValue &id, const QJsonObject &params, Respond respond);
    static QJsonObject resourceTemplates();

    // The most a read (read_file, resources/read) returns at once.
    static constexpr qint64 kReadLimit = 4 * 1024 * 1024;
    // Files resources/list shows at most, and per page.
    static constexpr int kListedFiles = 1000;
    static constexpr int kPageSize = 200;

    static QString uriOf(const QString &workspace, const QString &path);

private:
    void listFiles(const QJsonObject &arguments, McpTool::Reply reply);
    void readFile(const QJsonObject &arguments, McpTool::Reply reply);
    void writeFile(const QJsonObject &arguments, McpTool::Reply reply);

    core::Engine &m_engine;
    FileWork m_work;
};

} // namespace replhost::http
