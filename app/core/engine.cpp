// SPDX-License-Identifier: Apache-2.0
#include "engine.h"

#include "storage/historypruner.h"
#include "storage/historywriter.h"
#include "storage/store.h"

#include <QDir>
#include <QFile>
#include <QLockFile>

#include <cerrno>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace replhost::core {

namespace {

// The data directory holds every cell's code and output and env layers with credentials: 0700,
// and the files directly in it (the database, its WAL and shared memory, the history's pending
// log, the lock, the token) 0600, whatever they were made with before. SQLite gives a new WAL and -shm the database
// file's own mode, so they stay 0600 after this. Symlinks are not followed, and the workspaces'
// directories below are left as they are (each one replhost creates is made 0700).
Result<void> tightenDataDirectory(const QString &dataDir)
{
    const QByteArray path = QFile::encodeName(dataDir);
    const int fd = ::open(path.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || ::fchmod(fd, 0700) != 0) {
        const int error = errno;
        if (fd >= 0)
            ::close(fd);
        return makeError(QStringLiteral("io"), QStringLiteral("cannot make the data directory %1 "
                                                              "private (mode 0700): %2")
                                                       .arg(dataDir, QString::fromLocal8Bit(strerror(error))));
    }
    DIR *dir = ::fdopendir(fd);
    if (!dir) {
        ::close(fd);
        return {};
    }
    // An entry that cannot be tightened (owned by someone else) is only warned about: the
    // directory itself is private now, which is what protects what is in it.
    QStringList untightened;
    while (const dirent *entry = ::readdir(dir)) {
        struct stat st {};
        if (::fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        const bool tighten = (st.st_mode & 077) != 0
                             && (S_ISREG(st.st_mode) || (S_ISDIR(st.st_mode) && entry->d_name[0] != '.'));
        if (tighten && ::fchmodat(fd, entry->d_name, st.st_mode & 0700, 0) != 0 && errno != ENOENT)
            untightened.append(QFile::decodeName(entry->d_name));
    }
    ::closedir(dir);
    if (!untightened.isEmpty())
        qWarning("replhost: cannot make %s in the data directory %s private",
                 qPrintable(untightened.join(QStringLiteral(", "))), qPrintable(dataDir));
    return {};
}

} // namespace

Engine::~Engine()
{
    // Retention first: its thread stops after the step it is in, and nothing waits for a pass.
    delete m_retention;
    m_retention = nullptr;
    m_pruner.reset();
    delete m_metrics;
    m_metrics = nullptr;
    delete m_commands;  // kills what still runs
    m_commands = nullptr;
    // Contexts first: stopping them records their last events through the writer and store.
    delete m_contexts;
    m_contexts = nullptr;
    m_writer.reset();
    delete m_workspaces;
    m_workspaces = nullptr;
    m_store.reset();
    delete m_plugins;
    m_plugins = nullptr;
}

void Engine::flushHistory()
{
    m_writer->flush();
}

QJsonObject Engine::databaseJson()
{
    const storage::HistoryPruner::Totals totals = m_retention->totals();
    QJsonObject json{
        {QStringLiteral("retention"),
         QJsonObject{{QStringLiteral("passes"), totals.passes},
                     {QStringLiteral("outputs_pruned"), totals.outputsPruned},
                     {QStringLiteral("executions_deleted"), totals.executionsDeleted},
                     {QStringLiteral("pages_reclaimed"), totals.pagesReclaimed},
                     {QStringLiteral("failed_passes"), totals.failedPasses},
                     {QStringLiteral("last_error"), totals.lastError.isEmpty()
                                                            ? QJsonValue()
                                                            : QJsonValue(totals.lastError)}}}};
    auto size = m_store->databaseSize();
    if (!size) {
        json.insert(QStringLiteral("error"), size.error().message);
        return json;
    }
    json.insert(QStringLiteral("bytes"), size->bytes);
    json.insert(QStringLiteral("free_bytes"), size->freeBytes);
    json.insert(QStringLiteral("wal_bytes"), size->walBytes);
    json.insert(QStringLiteral("incremental_vacuum"), size->incrementalVacuum);
    return json;
}

QString Engine::appVersion()
{
    return QStringLiteral(REPLHOST_VERSION);
}

int Engine::schemaVersion()
{
    return storage::Store::currentSchemaVersion();
}

Result<std::unique_ptr<Engine>> Engine::open(const EngineConfig &config)
{
    std::unique_ptr<Engine> engine(new Engine);
    engine->m_config = config;
    engine->m_dataDir = config.resolvedDataDir();
    if (!QDir().mkpath(engine->m_dataDir))
        return makeError(QStringLiteral("io"),
                         QStringLiteral("cannot create the data directory %1").arg(engine->m_dataDir));
    if (auto r = tightenDataDirectory(engine->m_dataDir); !r)
        return r.error();

    // One engine per data directory: contexts, workers and history must have one owner.
    engine->m_lock = std::make_unique<QLockFile>(QDir(engine->m_dataDir).filePath(QStringLiteral("lock")));
    engine->m_lock->setStaleLockTime(0);  // a lock is stale only when its process is gone
    if (!engine->m_lock->tryLock(0)) {
        qint64 pid = 0;
        QString host, app;
        engine->m_lock->getLockInfo(&pid, &host, &app);
        if (engine->m_lock->error() == QLockFile::LockFailedError)
            return makeError(QStringLiteral("locked"),
                             QStringLiteral("the data directory %1 is in use by %2 (pid %3); stop "
                                            "it or choose another --data-dir")
                                 .arg(engine->m_dataDir, app.isEmpty() ? QStringLiteral("another replhost") : app)
                                 .arg(pid));
        return makeError(QStringLiteral("io"),
                         QStringLiteral("cannot lock the data directory %1").arg(engine->m_dataDir));
    }

    const QString dbPath = QDir(engine->m_dataDir).filePath(QStringLiteral("replhost.db"));
    auto store = storage::Store::open(dbPath);
    if (!store)
        return store.error();
    engine->m_store = std::move(*store);
    // Opening the writer first applies what it had acknowledged and not committed when an
    // earlier engine ended (its pending log), ends of runs included.
    auto writer = storage::HistoryWriter::open(dbPath);
    if (!writer)
        return writer.error();
    engine->m_writer = std::move(*writer);
    // Executions that were running when an earlier engine ended without finishing them.
    if (auto r = engine->m_store->abandonRunningExecutions(QStringLiteral("aborted")); !r)
        return r.error();
    auto pruner = storage::HistoryPruner::open(dbPath);
    if (!pruner)
        return pruner.error();
    engine->m_pruner = std::move(*pruner);
    // Again, now that the database and its WAL exist.
    if (auto r = tightenDataDirectory(engine->m_dataDir); !r)
        return r.error();

    engine->m_plugins = new PluginRegistry(engine.get());
    engine->m_plugins->discover(PluginRegistry::standardSearchPaths(config.pluginPaths),
                                config.languageSettings);

    engine->m_workspaces = new WorkspaceManager(engine->m_store.get(), engine->m_dataDir,
                                                config.workspaceDefaults, engine.get());
    if (auto r = engine->m_workspaces->ensureDefault(); !r)
        return r.error();

    engine->m_contexts = new ContextManager(engine->m_store.get(), engine->m_writer.get(),
                                            engine->m_plugins, engine->m_workspaces,
                                            config.languageSettings,
                                            config.finishedExecutionsKept, engine.get());
    engine->m_contexts->setResidencyLimits(config.resolvedMaxResidentWorkers(),
                                           config.workerIdleTimeoutMs);
    // Before anything can start a worker: a sandboxed workspace's workers need to know.
    engine->m_sandbox = SandboxSupport::probe(config.bwrapPath, {engine->m_dataDir});
    engine->m_contexts->setSandboxSupport(engine->m_sandbox);
    if (auto r = engine->m_contexts->load(); !r)
        return r.error();
    engine->m_contexts->setWarmPoolSizes(config.warmPoolSize, config.warmPoolSizes);
    engine->m_commands = new CommandRunner(engine->m_store.get(), engine->m_workspaces,
                                           engine->m_sandbox, config.finishedExecutionsKept,
                                           engine.get());
    engine->m_metrics = new Metrics(engine->m_contexts, engine->m_commands, engine.get());
    engine->m_retention = new HistoryRetention(engine->m_pruner.get(), engine->m_workspaces,
                                               config.historyPruneIntervalMs, engine.get());
    return engine;
}

} // namespace replhost::core
