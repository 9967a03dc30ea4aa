// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

namespace replhost::core {

// The cgroup directories of one worker (one per cgroup v1 hierarchy, or one cgroup v2
// directory), made by CgroupManager::create(). Destroying it kills whatever still runs in them
// (a fork bomb's processes that left the worker's process group included) and removes them.
//
// Give it the worker's Session as parent: a WorkerProcess kills and reaps its worker in its
// destructor, before QObject deletes its children, so the cgroups are removed once the worker
// is gone. Engine thread only. Errors on removal are logged, never thrown: a directory that
// cannot be removed yet is left for CgroupManager, which sweeps its own tree when it goes.
class WorkerCgroup : public QObject {
    Q_OBJECT
public:
    WorkerCgroup(QStringList directories, QObject *parent = nullptr);
    ~WorkerCgroup() override;

    const QStringList &directories() const { return m_directories; }
    // The cgroup.procs file of each directory, for the confinement's "cgroups".
    QStringList procsFiles() const;

    // Kills every process in `directory` and removes it; false if it is still there.
    // Used for worker cgroups and, by CgroupManager, for what a dead server left behind.
    static bool removeDirectory(const QString &directory);

private:
    QStringList m_directories;
};

} // namespace replhost::core
