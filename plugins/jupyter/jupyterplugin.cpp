// SPDX-License-Identifier: Apache-2.0
#include "jupyterplugin.h"

#include "kernelsession.h"

#include <replhost/sdk/workerprocess.h>

#include <QDateTime>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTimer>

namespace replhost::jupyter {

namespace {

// The lexers the workbench knows, by kernelspec language.
QString lexerFor(const QString &language)
{
    static const QMap<QString, QString> lexers{
        {QStringLiteral("python"), QStringLiteral("python")},
        {QStringLiteral("r"), QStringLiteral("r")},
        {QStringLiteral("javascript"), QStringLiteral("javascript")},
        {QStringLiteral("bash"), QStringLiteral("bash")},
        {QStringLiteral("perl"), QStringLiteral("perl")},
        {QStringLiteral("java"), QStringLiteral("java")},
        {QStringLiteral("sql"), QStringLiteral("sql")},
        {QStringLiteral("lua"), QStringLiteral("lua")},
    };
    return lexers.value(language.toLower());
}

QStringList extensionsFor(const QString &language)
{
    static const QMap<QString, QStringList> extensions{
        {QStringLiteral("r"), {QStringLiteral(".r"), QStringLiteral(".R")}},
        {QStringLiteral("julia"), {QStringLiteral(".jl")}},
        {QStringLiteral("octave"), {QStringLiteral(".m")}},
    };
    return extensions.value(language.toLower());
}

QJsonObject capabilitiesFor(const KernelSpec &spec)
{
    return QJsonObject{
        {QStringLiteral("interrupt"),
         QJsonArray{spec.interruptByMessage ? QStringLiteral("inband") : QStringLiteral("signal")}},
        // The environment reaches a kernel when it starts; a run cannot change it for itself.
        {QStringLiteral("env_per_execution"), false},
        {QStringLiteral("complete"), true},
        {QStringLiteral("variables"), false},
        {QStringLiteral("display"),
         QJsonArray{QStringLiteral("text/plain"), QStringLiteral("text/html"),
                    QStringLiteral("text/markdown"), QStringLiteral("text/latex"),
                    QStringLiteral("image/svg+xml"), QStringLiteral("image/png"),
                    QStringLiteral("image/jpeg"), QStringLiteral("application/json")}},
        // A kernel takes the context's environment and directory only when it starts, so a
        // kernel started ahead of its context would have to be restarted for it.
        {QStringLiteral("warm_pool"), false},
        {QStringLiteral("kernelspec"), spec.name},
        {QStringLiteral("kernelspec_dir"), spec.directory},
    };
}

constexpr int kProbeTimeoutMs = 20000;

// What a kernel said of itself the last time it was asked, kept in the user's cache so that the
// host starts a kernel once per installed version rather than at every start.
QString probeCacheFile()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation))
        .filePath(QStringLiteral("replhost/jupyter-kernels.json"));
}

QJsonObject readProbeCache()
{
    QFile file(probeCacheFile());
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

void writeProbeCache(const QString &key, const QJsonObject &value)
{
    QJsonObject cache = readProbeCache();
    cache.insert(key, value);
    QDir().mkpath(QFileInfo(probeCacheFile()).absolutePath());
    QSaveFile file(probeCacheFile());
    if (file.open(QIODevice::WriteOnly)) {
        file.write(QJsonDocument(cache).toJson());
        file.commit();
    }
}

// Changes when the kernelspec or the program it starts changes.
QString fingerprint(const KernelSpec &spec, const QString &program)
{
    const auto stamp = [](const QString &path) {
        return QString::number(QFileInfo(path).lastModified().toMSecsSinceEpoch());
    };
    return QStringLiteral("%1|%2|%3").arg(stamp(QDir(spec.directory).filePath(QStringLiteral("kernel.json"))),
                                          program, stamp(program));
}

} // namespace

KernelSpecHandler::KernelSpecHandler(QString languageId, KernelSpec spec)
    : m_languageId(std::move(languageId)), m_spec(std::move(spec))
{
}

sdk::RuntimeInfo KernelSpecHandler::probe(const QJsonObject &)
{
    sdk::RuntimeInfo info;
    const QString program = m_spec.argv.first();
    const QString resolved = program.contains(QLatin1Char('/'))
                                 ? (QFileInfo(program).isExecutable() ? program : QString())
                                 : QStandardPaths::findExecutable(program);
    if (resolved.isEmpty()) {
        info.reason = QStringLiteral("the kernelspec %1 (%2) starts \"%3\", which is not %4; "
                                     "install it or fix %2/kernel.json")
                          .arg(m_spec.name, m_spec.directory, program,
                               program.contains(QLatin1Char('/')) ? QStringLiteral("an executable")
                                                                  : QStringLiteral("on PATH"));
        return info;
    }
    info.executable = QFileInfo(resolved).absoluteFilePath();

    // The version is the kernel's own word (kernel_info_reply): the program is often a launcher
    // of another language (R, python3 -m ipykernel_launcher), and only a kernel that starts is
    // one that can be used.
    const QString key = m_spec.directory;
    const QString print = fingerprint(m_spec, info.executable);
    const QJsonObject cached = readProbeCache().value(key).toObject();
    if (cached.value(QLatin1String("fingerprint")).toString() == print) {
        info.reason = cached.value(QLatin1String("reason")).toString();
        info.available = info.reason.isEmpty();
        info.version = cached.value(QLatin1String("version")).toString();
        return info;
    }
    sdk::SessionOptions options;
    options.workingDirectory = QDir::tempPath();
    const QProcessEnvironment system = QProcessEnvironment::systemEnvironment();
    for (const QString &name : system.keys())
        options.environment.insert(name, system.value(name));
    KernelSession session(m_languageId, m_spec, info.executable, options);
    QEventLoop loop;
    QString failure;
    bool ready = false;
    QObject::connect(&session, &sdk::Session::ready, &loop, [&] { ready = true; loop.quit(); });
    QObject::connect(&session, &sdk::Session::failed, &loop, [&](const QString &message) {
        failure = message;
        loop.quit();
    });
    QTimer::singleShot(kProbeTimeoutMs, &loop, &QEventLoop::quit);
    session.start();
    if (!ready && failure.isEmpty())
        loop.exec();
    if (!ready) {
        info.reason = QStringLiteral("the kernel of kernelspec %1 (%2) does not start: %3")
                          .arg(m_spec.name, m_spec.directory,
                               failure.isEmpty() ? QStringLiteral("no answer within %1 s").arg(kProbeTimeoutMs / 1000)
                                                 : failure);
        // Kept too: a broken kernelspec must not hold up every start of the host.
        writeProbeCache(key, {{QStringLiteral("fingerprint"), print},
                              {QStringLiteral("reason"), info.reason}});
        return info;
    }
    info.available = true;
    info.version = session.info().languageVersion;
    writeProbeCache(key, {{QStringLiteral("fingerprint"), print},
                          {QStringLiteral("version"), info.version}});
    return info;
}

std::unique_ptr<sdk::Session> KernelSpecHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                               const sdk::SessionOptions &options)
{
    if (!runtime.available)
        return std::make_unique<sdk::FailedSession>(runtime.reason);
    const QJsonObject confinement = options.settings.value(QLatin1String("confinement")).toObject();
    if (confinement.contains(QLatin1String("sandbox")))
        return std::make_unique<sdk::FailedSession>(
            QStringLiteral("Jupyter kernels do not run in sandbox workspaces: the kernel's "
                           "connection would have to cross the sandbox's wall; use a workspace "
                           "without isolation \"sandbox\" for %1").arg(m_languageId));
    return std::make_unique<KernelSession>(m_languageId, m_spec, runtime.executable, options);
}

sdk::LanguageCatalog JupyterPlugin::languages(const QJsonObject &settings)
{
    QStringList searchPath;
    for (const QJsonValue &dir : settings.value(QLatin1String("kernelspec_path")).toArray())
        searchPath.append(dir.toString());
    searchPath.append(kernelSpecSearchPath());
    QStringList excluded;
    for (const QJsonValue &name : settings.value(QLatin1String("exclude")).toArray())
        excluded.append(name.toString().toLower());

    QStringList problems;
    sdk::LanguageCatalog catalog;
    static const QRegularExpression invalid(QStringLiteral("[^a-z0-9_+-]"));
    for (const KernelSpec &spec : findKernelSpecs(searchPath, &problems)) {
        if (excluded.contains(spec.name))
            continue;
        const QString id = QStringLiteral("jupyter-") + QString(spec.name).replace(invalid, QStringLiteral("-"));
        if (id.size() > 32) {
            problems.append(QStringLiteral("%1: the name is too long for a language id").arg(spec.directory));
            continue;
        }
        auto handler = std::make_unique<KernelSpecHandler>(id, spec);
        sdk::ProvidedLanguage language;
        language.id = id;
        language.name = spec.displayName;
        const QString alias = spec.language.toLower();
        if (!alias.isEmpty() && alias != id)
            language.aliases = {alias};
        language.extensions = extensionsFor(spec.language);
        language.lexer = lexerFor(spec.language);
        language.capabilities = capabilitiesFor(spec);
        language.handler = handler.get();
        catalog.languages.append(language);
        m_handlers.push_back(std::move(handler));
    }
    if (catalog.languages.isEmpty())
        catalog.reason = QStringLiteral("no Jupyter kernelspec found in %1%2; install a kernel "
                                        "(r-cran-irkernel for R, python3-ipykernel for Python)")
                             .arg(searchPath.join(QStringLiteral(", ")),
                                  problems.isEmpty() ? QString()
                                                     : QStringLiteral(" (%1)").arg(problems.join(QStringLiteral("; "))));
    return catalog;
}

} // namespace replhost::jupyter
