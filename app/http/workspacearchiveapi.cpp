// SPDX-License-Identifier: Apache-2.0
#include "workspacearchiveapi.h"

#include "httpexchange.h"
#include "router.h"
#include "workspaceroute.h"

#include "core/engine.h"
#include "core/workspacearchive.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcArchive, "replhost.http.archive", QtInfoMsg)

using core::WorkspaceArchive;

WorkspaceArchiveApi::WorkspaceArchiveApi(core::Engine &engine, qint64 maxBytes)
    : m_engine(engine), m_maxBytes(maxBytes)
{
}

void WorkspaceArchiveApi::registerRoutes(Router &router)
{
    auto bind = [this](void (WorkspaceArchiveApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) { (this->*handler)(exchange); };
    };
    router.add("GET", QStringLiteral("/v1/workspaces/{ws}/archive"), bind(&WorkspaceArchiveApi::exportArchive));
    router.add("PUT", QStringLiteral("/v1/workspaces/{ws}/archive"), bind(&WorkspaceArchiveApi::importArchive));
}

void WorkspaceArchiveApi::exportArchive(const ExchangePtr &exchange)
{
    const Result<storage::WorkspaceRecord> workspace = m_engine.workspaces().get(WorkspaceRoute::of(*exchange));
    if (!workspace) {
        exchange->sendError(workspace.error());
        return;
    }
    m_engine.flushHistory();
    const Result<QJsonObject> manifest = WorkspaceArchive::describe(m_engine.store(), *workspace);
    if (!manifest) {
        exchange->sendError(manifest.error());
        return;
    }
    m_work.run([manifest = *manifest, directory = workspace->directory, maxBytes = m_maxBytes] {
                   return WorkspaceArchive::pack(manifest, directory, maxBytes);
               },
               [exchange, name = workspace->name](Result<QByteArray> archive) {
                   if (!archive) {
                       exchange->sendError(archive.error());
                       return;
                   }
                   exchange->addHeader("Content-Disposition",
                                       QByteArrayLiteral("attachment; filename=\"") + name.toUtf8() + ".tar\"");
                   exchange->send(200, "application/x-tar", *archive);
               });
}

void WorkspaceArchiveApi::importArchive(const ExchangePtr &exchange)
{
    const QString name = WorkspaceRoute::of(*exchange);
    if (m_engine.workspaces().get(name)) {
        exchange->sendError(409, QStringLiteral("conflict"),
                            QStringLiteral("workspace \"%1\" already exists; delete it first or import "
                                           "under another name").arg(name));
        return;
    }
    m_work.run([archive = exchange->request().body] { return WorkspaceArchive::unpack(archive); },
               [this, exchange, name](Result<WorkspaceArchive::Contents> contents) {
        if (!contents) {
            exchange->sendError(contents.error());
            return;
        }
        const Result<storage::WorkspaceRecord> created = m_engine.workspaces().create(
                name, {}, contents->manifest.value(QStringLiteral("settings")).toObject());
        if (!created) {
            exchange->sendError(created.error());
            return;
        }
        // Whatever fails from here leaves nothing behind.
        const auto undo = [this, name](const ExchangePtr &answer, const Error &error) {
            if (const Result<void> removed = m_engine.workspaces().remove(name, true); !removed)
                qCWarning(lcArchive).noquote() << "import of" << name << "failed, and so did removing it:"
                                               << removed.error().message;
            answer->sendError(error);
        };
        m_work.run([entries = contents->entries, directory = created->directory] {
                       return WorkspaceArchive::writeFiles(entries, directory);
                   },
                   [this, exchange, undo, workspace = *created, manifest = contents->manifest](Result<void> written) {
            if (!written) {
                undo(exchange, written.error());
                return;
            }
            if (const Result<void> restored = WorkspaceArchive::restore(m_engine.store(), workspace, manifest);
                !restored) {
                undo(exchange, restored.error());
                return;
            }
            if (const Result<void> loaded = m_engine.contexts().load(workspace); !loaded) {
                undo(exchange, loaded.error());
                return;
            }
            exchange->sendJson(201, QJsonObject{
                    {QStringLiteral("name"), workspace.name},
                    {QStringLiteral("directory"), workspace.directory},
                    {QStringLiteral("contexts"),
                     manifest.value(QStringLiteral("contexts")).toArray().size()}});
        });
    });
}

} // namespace replhost::http
