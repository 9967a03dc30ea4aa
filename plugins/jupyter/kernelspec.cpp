// SPDX-License-Identifier: Apache-2.0
#include "kernelspec.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

namespace replhost::jupyter {

QStringList kernelSpecSearchPath()
{
    QStringList dirs;
    for (const QString &dir : qEnvironmentVariable("JUPYTER_PATH").split(QLatin1Char(':'),
                                                                        Qt::SkipEmptyParts))
        dirs.append(dir);
    QString user = qEnvironmentVariable("JUPYTER_DATA_DIR");
    if (user.isEmpty()) {
        const QString xdg = qEnvironmentVariable("XDG_DATA_HOME");
        user = xdg.isEmpty() ? QDir::home().filePath(QStringLiteral(".local/share/jupyter"))
                             : QDir(xdg).filePath(QStringLiteral("jupyter"));
    }
    dirs.append(user);
    dirs.append(QStringLiteral("/usr/local/share/jupyter"));
    dirs.append(QStringLiteral("/usr/share/jupyter"));
    QStringList kernels;
    for (const QString &dir : std::as_const(dirs)) {
        const QString path = QDir::cleanPath(QDir(dir).absoluteFilePath(QStringLiteral("kernels")));
        if (!kernels.contains(path))
            kernels.append(path);
    }
    return kernels;
}

QList<KernelSpec> findKernelSpecs(const QStringList &searchPath, QStringList *problems)
{
    QList<KernelSpec> specs;
    QSet<QString> seen;
    const auto problem = [problems](const QString &text) {
        if (problems)
            problems->append(text);
    };
    for (const QString &root : searchPath) {
        const QDir dir(root);
        for (const QString &entry : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            const QString name = entry.toLower();
            const QString specDir = QDir::cleanPath(dir.absoluteFilePath(entry));
            QFile file(QDir(specDir).filePath(QStringLiteral("kernel.json")));
            if (seen.contains(name) || !file.exists())
                continue;
            seen.insert(name);
            if (!file.open(QIODevice::ReadOnly)) {
                problem(QStringLiteral("%1: %2").arg(file.fileName(), file.errorString()));
                continue;
            }
            QJsonParseError error;
            const QJsonObject json = QJsonDocument::fromJson(file.readAll(), &error).object();
            // replhost's own kernelspecs (replhost-cli kernelspec install) run replhost-kernel,
            // a client of a replhost server: as languages of a server they would loop back
            // into it, or start another server while this one starts.
            if (json.value(QLatin1String("metadata")).toObject().contains(QLatin1String("replhost")))
                continue;
            KernelSpec spec;
            spec.name = name;
            spec.directory = specDir;
            spec.displayName = json.value(QLatin1String("display_name")).toString(name);
            spec.language = json.value(QLatin1String("language")).toString();
            for (const QJsonValue &arg : json.value(QLatin1String("argv")).toArray())
                spec.argv.append(arg.toString());
            const QJsonObject env = json.value(QLatin1String("env")).toObject();
            for (auto it = env.begin(); it != env.end(); ++it)
                spec.env.insert(it.key(), it.value().toString());
            spec.interruptByMessage =
                json.value(QLatin1String("interrupt_mode")).toString() == QLatin1String("message");
            if (error.error != QJsonParseError::NoError || spec.argv.isEmpty()
                || spec.argv.first().isEmpty()) {
                problem(QStringLiteral("%1: not a kernelspec (%2)")
                            .arg(file.fileName(), error.error != QJsonParseError::NoError
                                                      ? error.errorString()
                                                      : QStringLiteral("no \"argv\"")));
                continue;
            }
            specs.append(spec);
        }
    }
    std::sort(specs.begin(), specs.end(),
              [](const KernelSpec &a, const KernelSpec &b) { return a.name < b.name; });
    return specs;
}

QStringList kernelCommand(const KernelSpec &spec, const QString &connectionFile)
{
    QStringList argv;
    for (QString arg : spec.argv) {
        arg.replace(QLatin1String("{connection_file}"), connectionFile);
        arg.replace(QLatin1String("{resource_dir}"), spec.directory);
        argv.append(arg);
    }
    return argv;
}

} // namespace replhost::jupyter
