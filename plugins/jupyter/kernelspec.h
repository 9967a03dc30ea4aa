// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace replhost::jupyter {

// One installed Jupyter kernelspec (a directory `kernels/<name>/` holding kernel.json).
struct KernelSpec {
    QString name;          // the directory's name, lowercased as Jupyter does: "ir", "python3"
    QString directory;     // absolute: the spec's resource directory
    QString displayName;   // "R"
    QString language;      // "R", "python"
    QStringList argv;      // with "{connection_file}" (and maybe "{resource_dir}") in it
    QMap<QString, QString> env;  // set in the kernel's environment over the context's
    bool interruptByMessage = false;  // interrupt_mode "message" (default "signal")
};

// The directories Jupyter searches for kernelspecs, in its order: each of JUPYTER_PATH, the
// user's data directory (JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else
// ~/.local/share/jupyter), /usr/local/share/jupyter, /usr/share/jupyter; each with "kernels"
// appended. Reads the environment of the calling process.
QStringList kernelSpecSearchPath();

// The kernelspecs found in `searchPath` (directories that hold `<name>/kernel.json`), the first
// of a name winning, sorted by name, except replhost's own (metadata.replhost: replhost-kernel,
// which is a client of a replhost server). A spec whose kernel.json cannot be read, or has no argv,
// is left out and its reason appended to `problems` (when not null).
QList<KernelSpec> findKernelSpecs(const QStringList &searchPath, QStringList *problems = nullptr);

// The spec's argv for one kernel: "{connection_file}" and "{resource_dir}" replaced.
QStringList kernelCommand(const KernelSpec &spec, const QString &connectionFile);

} // namespace replhost::jupyter
