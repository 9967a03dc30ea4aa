// SPDX-License-Identifier: Apache-2.0
#include "pluginregistry.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QLibrary>
#include <QPluginLoader>
#include <QRegularExpression>
#include <QSet>

#include <replhost/sdk/languageprovider.h>

#include <algorithm>

namespace replhost::core {

namespace {

QStringList toStringList(const QJsonValue &value)
{
    QStringList list;
    for (const auto &v : value.toArray())
        list.append(v.toString());
    return list;
}

bool isValidLanguageId(const QString &id)
{
    static const QRegularExpression idPattern(QStringLiteral("^[a-z][a-z0-9_+-]{0,31}$"));
    return idPattern.match(id).hasMatch();
}

// Reads and checks the metadata without running any of the plugin's code. Returns the reason
// the plugin cannot be used, or an empty string.
QString readMetadata(const QJsonObject &raw, PluginEntry &entry, PluginEntry::State &failState)
{
    failState = PluginEntry::State::Broken;
    if (raw.isEmpty())
        return QStringLiteral("not a Qt plugin, or its metadata cannot be read");
    const QString iid = raw.value(QLatin1String("IID")).toString();
    if (!iid.startsWith(QLatin1String("org.replhost.LanguageHandler/")))
        return QStringLiteral("not a replhost language plugin (interface id \"%1\")").arg(iid);
    const QJsonValue metaValue = raw.value(QLatin1String("MetaData"));
    if (!metaValue.isObject() || metaValue.toObject().isEmpty())
        return QStringLiteral("the plugin's metadata JSON is missing or not an object");
    const QJsonObject meta = metaValue.toObject();
    entry.id = meta.value(QLatin1String("id")).toString();
    entry.name = meta.value(QLatin1String("name")).toString();
    entry.version = meta.value(QLatin1String("version")).toString();
    entry.sdkVersion = meta.value(QLatin1String("sdkVersion")).toString();
    entry.lexer = meta.value(QLatin1String("lexer")).toString();
    entry.aliases = toStringList(meta.value(QLatin1String("aliases")));
    entry.extensions = toStringList(meta.value(QLatin1String("extensions")));
    entry.capabilities = meta.value(QLatin1String("capabilities")).toObject();

    for (const char *field : {"id", "name", "version", "sdkVersion"}) {
        const QJsonValue v = meta.value(QLatin1String(field));
        if (!v.isString() || v.toString().isEmpty())
            return QStringLiteral("metadata field \"%1\" is missing or not a string")
                .arg(QLatin1String(field));
    }
    if (!isValidLanguageId(entry.id))
        return QStringLiteral("metadata field \"id\" (\"%1\") must be lowercase letters, digits, "
                              "'_', '+' or '-'").arg(entry.id);
    // Optional fields, when present, must have their type: a plugin that declares its aliases
    // as one string would otherwise silently provide none of them.
    for (const char *field : {"aliases", "extensions"}) {
        const QJsonValue v = meta.value(QLatin1String(field));
        const QJsonArray list = v.toArray();
        if (!v.isUndefined() && (!v.isArray() || std::any_of(list.begin(), list.end(),
                                                              [](const QJsonValue &item) {
                                                                  return !item.isString();
                                                              })))
            return QStringLiteral("metadata field \"%1\" must be an array of strings")
                .arg(QLatin1String(field));
    }
    const QJsonValue lexer = meta.value(QLatin1String("lexer"));
    if (!lexer.isUndefined() && !lexer.isString())
        return QStringLiteral("metadata field \"lexer\" must be a string");
    const QJsonValue capabilities = meta.value(QLatin1String("capabilities"));
    if (!capabilities.isUndefined() && !capabilities.isObject())
        return QStringLiteral("metadata field \"capabilities\" must be an object");
    const QJsonValue languages = meta.value(QLatin1String("languages"));
    if (!languages.isUndefined() && languages != QJsonValue(QLatin1String("discovered")))
        return QStringLiteral("metadata field \"languages\" must be \"discovered\" when present");
    if (languages.isString())
        entry.provider = entry.id;

    static const QRegularExpression sdkVersionPattern(QStringLiteral("^(\\d{1,4})\\.\\d{1,4}$"));
    const QRegularExpressionMatch sdkVersion = sdkVersionPattern.match(entry.sdkVersion);
    if (!sdkVersion.hasMatch())
        return QStringLiteral("metadata field \"sdkVersion\" (\"%1\") is not MAJOR.MINOR")
            .arg(entry.sdkVersion);
    const int major = sdkVersion.captured(1).toInt();
    const QString expectedIid = QStringLiteral(REPLHOST_LANGUAGEHANDLER_IID);
    if (major != sdk::kSdkVersionMajor || iid != expectedIid) {
        failState = PluginEntry::State::Incompatible;
        return QStringLiteral("built for replhost SDK %1 (interface %2); this replhost has SDK "
                              "%3 (interface %4): rebuild the plugin against SDK %5.x")
            .arg(entry.sdkVersion, iid, QStringLiteral(REPLHOST_SDK_VERSION_STRING), expectedIid)
            .arg(sdk::kSdkVersionMajor);
    }
    return {};
}

} // namespace

QString PluginEntry::stateName(State state)
{
    switch (state) {
    case State::Loaded: return QStringLiteral("loaded");
    case State::Incompatible: return QStringLiteral("incompatible");
    case State::Broken: return QStringLiteral("broken");
    case State::Shadowed: return QStringLiteral("shadowed");
    }
    return {};
}

QJsonObject PluginSearchDir::toJson() const
{
    return QJsonObject{
        {QStringLiteral("directory"), path},
        {QStringLiteral("origin"), origin},
        {QStringLiteral("exists"), QFileInfo(path).isDir()},
    };
}

QJsonObject PluginEntry::toJson() const
{
    return QJsonObject{
        {QStringLiteral("id"), id},
        {QStringLiteral("provider"), provider.isEmpty() ? QJsonValue() : QJsonValue(provider)},
        {QStringLiteral("name"), name},
        {QStringLiteral("version"), version},
        {QStringLiteral("sdk_version"), sdkVersion},
        {QStringLiteral("aliases"), QJsonArray::fromStringList(aliases)},
        {QStringLiteral("extensions"), QJsonArray::fromStringList(extensions)},
        {QStringLiteral("lexer"), lexer},
        {QStringLiteral("capabilities"), capabilities},
        {QStringLiteral("file"), fileName},
        {QStringLiteral("directory"), foundIn.path},
        {QStringLiteral("origin"), foundIn.origin},
        {QStringLiteral("state"), stateName(state)},
        {QStringLiteral("error"), error.isEmpty() ? QJsonValue() : QJsonValue(error)},
        {QStringLiteral("available"), state == State::Loaded && runtime.available},
        {QStringLiteral("runtime_version"), runtime.version},
        {QStringLiteral("executable"), runtime.executable},
        {QStringLiteral("reason"), state == State::Loaded
                 ? (runtime.available ? QJsonValue() : QJsonValue(runtime.reason))
                 : QJsonValue(error)},
    };
}

PluginRegistry::PluginRegistry(QObject *parent) : QObject(parent) {}

PluginRegistry::~PluginRegistry()
{
    // Handlers are owned by their loaders' root components. Plugins stay mapped until exit:
    // sessions created by a plugin may still run code from it while the engine shuts down.
    qDeleteAll(m_loaders);
}

QList<PluginSearchDir> PluginRegistry::standardSearchPaths(const QStringList &extraPaths)
{
    QList<PluginSearchDir> dirs;
    const auto add = [&dirs](const QString &path, const char *origin) {
        const QString clean = QDir::cleanPath(QDir(path).absolutePath());
        const bool known = std::any_of(dirs.cbegin(), dirs.cend(),
                                       [&clean](const PluginSearchDir &dir) { return dir.path == clean; });
        if (!known)
            dirs.append(PluginSearchDir{clean, QLatin1String(origin)});
    };
    for (const QString &p : qEnvironmentVariable("REPLHOST_PLUGIN_PATH").split(QLatin1Char(':'),
                                                                               Qt::SkipEmptyParts))
        add(p, "environment");
    for (const QString &p : extraPaths)
        add(p, "configured");
    // CMake's GNUInstallDirs gives a prefix other than /usr the libdir "lib", so these are where
    // `cmake --install` puts a plugin with --prefix ~/.local and with the default prefix.
    add(QDir::home().filePath(QStringLiteral(".local/lib/replhost/plugins")), "user");
    // And their multiarch forms, where a plugin built with Debian's libdir lands.
    add(QDir::home().filePath(QStringLiteral(".local/lib/" REPLHOST_MULTIARCH_LIBDIR "replhost/plugins")), "user");
    QString xdg = qEnvironmentVariable("XDG_DATA_HOME");
    if (xdg.isEmpty())
        xdg = QDir::home().filePath(QStringLiteral(".local/share"));
    add(QDir(xdg).filePath(QStringLiteral("replhost/plugins")), "user");
    add(QStringLiteral("/usr/local/lib/replhost/plugins"), "local");
    add(QStringLiteral("/usr/local/lib/" REPLHOST_MULTIARCH_LIBDIR "replhost/plugins"), "local");
    add(QStringLiteral("/usr/lib/" REPLHOST_MULTIARCH_LIBDIR "replhost/plugins"), "system");
    const QDir exeDir(QCoreApplication::applicationDirPath());
    add(exeDir.filePath(QStringLiteral("../" REPLHOST_PLUGIN_INSTALL_DIR)), "install");
    add(exeDir.filePath(QStringLiteral("../lib/replhost/plugins")), "install");
    return dirs;
}

void PluginRegistry::discover(const QStringList &searchPaths, const QJsonObject &languageSettings)
{
    QList<PluginSearchDir> dirs;
    for (const QString &path : searchPaths)
        dirs.append(PluginSearchDir{QDir::cleanPath(QDir(path).absolutePath()), QStringLiteral("configured")});
    discover(dirs, languageSettings);
}

void PluginRegistry::discover(const QList<PluginSearchDir> &searchDirs, const QJsonObject &languageSettings)
{
    m_entries.clear();
    m_searchDirs = searchDirs;
    QSet<QString> seenFiles;
    for (const PluginSearchDir &searchDir : searchDirs) {
        const QDir dir(searchDir.path);
        if (!dir.exists())
            continue;
        const auto files = dir.entryInfoList(QDir::Files | QDir::Readable, QDir::Name);
        for (const QFileInfo &file : files) {
            const QString fileName = file.canonicalFilePath();
            if (!QLibrary::isLibrary(fileName) || seenFiles.contains(fileName))
                continue;
            seenFiles.insert(fileName);

            PluginEntry entry;
            entry.fileName = fileName;
            entry.foundIn = searchDir;
            auto *loader = new QPluginLoader(fileName);
            PluginEntry::State failState;
            entry.error = readMetadata(loader->metaData(), entry, failState);
            if (entry.error.isEmpty()) {
                const QString lowerId = entry.id.toLower();
                for (const auto &other : std::as_const(m_entries)) {
                    const QString &taken = entry.provider.isEmpty() ? other.id : other.provider;
                    if (other.state == PluginEntry::State::Loaded && taken == lowerId) {
                        entry.error = QStringLiteral("language \"%1\" is already provided by %2")
                                          .arg(entry.id, other.fileName);
                        failState = PluginEntry::State::Shadowed;
                        break;
                    }
                }
            }
            if (entry.error.isEmpty()) {
                QObject *instance = loader->instance();
                auto *handler = qobject_cast<sdk::LanguageHandler *>(instance);
                auto *provider = qobject_cast<sdk::LanguageProvider *>(instance);
                if (!entry.provider.isEmpty() ? !provider : !handler) {
                    const char *iid = entry.provider.isEmpty() ? REPLHOST_LANGUAGEHANDLER_IID
                                                               : REPLHOST_LANGUAGEPROVIDER_IID;
                    entry.error = instance ? QStringLiteral("the plugin does not implement %1")
                                                 .arg(QLatin1String(iid))
                                           : QStringLiteral("cannot load: %1").arg(loader->errorString());
                    failState = PluginEntry::State::Broken;
                } else {
                    m_loaders.append(loader);
                    loader = nullptr;
                    entry.state = PluginEntry::State::Loaded;
                    if (provider) {
                        addProvidedLanguages(entry, *provider, languageSettings);
                        continue;
                    }
                    entry.handler = handler;
                    entry.runtime = handler->probe(languageSettings.value(entry.id).toObject());
                }
            }
            if (!entry.error.isEmpty())
                entry.state = failState;
            delete loader;
            m_entries.append(entry);
        }
    }
    dropTakenAliases();
}

void PluginRegistry::addProvidedLanguages(const PluginEntry &plugin, sdk::LanguageProvider &provider,
                                          const QJsonObject &languageSettings)
{
    const sdk::LanguageCatalog catalog =
        provider.languages(languageSettings.value(plugin.id).toObject());
    if (catalog.languages.isEmpty()) {
        PluginEntry entry = plugin;
        entry.runtime.reason = catalog.reason.isEmpty()
                                   ? QStringLiteral("the plugin found no language on this machine")
                                   : catalog.reason;
        m_entries.append(entry);
        return;
    }
    for (const sdk::ProvidedLanguage &language : catalog.languages) {
        PluginEntry entry = plugin;
        entry.id = language.id;
        entry.name = language.name;
        entry.aliases = language.aliases;
        entry.extensions = language.extensions;
        entry.lexer = language.lexer;
        entry.capabilities = language.capabilities;
        if (!isValidLanguageId(entry.id)) {
            entry.state = PluginEntry::State::Broken;
            entry.error = QStringLiteral("the plugin provides a language id \"%1\" that is not "
                                         "lowercase letters, digits, '_', '+' or '-' (at most 32)")
                              .arg(entry.id);
        } else if (!language.handler) {
            entry.state = PluginEntry::State::Broken;
            entry.error = QStringLiteral("the plugin provides language \"%1\" without a handler")
                              .arg(entry.id);
        }
        for (const auto &other : std::as_const(m_entries)) {
            if (entry.state == PluginEntry::State::Loaded
                && other.state == PluginEntry::State::Loaded && other.id == entry.id) {
                entry.state = PluginEntry::State::Shadowed;
                entry.error = QStringLiteral("language \"%1\" is already provided by %2")
                                  .arg(entry.id, other.fileName);
            }
        }
        if (entry.state == PluginEntry::State::Loaded) {
            entry.handler = language.handler;
            entry.runtime = entry.handler->probe(languageSettings.value(entry.id).toObject());
        }
        m_entries.append(entry);
    }
}

void PluginRegistry::dropTakenAliases()
{
    // A plugin of one language keeps every name; a provided language keeps an alias only when
    // no plugin of one language, and no provided language before it, has that name.
    QSet<QString> taken;
    for (const PluginEntry &entry : std::as_const(m_entries)) {
        if (entry.state != PluginEntry::State::Loaded)
            continue;
        taken.insert(entry.id);
        if (entry.provider.isEmpty()) {
            for (const QString &alias : entry.aliases)
                taken.insert(alias.toLower());
        }
    }
    for (PluginEntry &entry : m_entries) {
        if (entry.state != PluginEntry::State::Loaded || entry.provider.isEmpty())
            continue;
        QStringList kept;
        for (const QString &alias : std::as_const(entry.aliases)) {
            if (!taken.contains(alias.toLower())) {
                kept.append(alias);
                taken.insert(alias.toLower());
            }
        }
        entry.aliases = kept;
    }
}

Result<const PluginEntry *> PluginRegistry::resolve(const QString &languageOrAlias) const
{
    const QString wanted = languageOrAlias.trimmed().toLower();
    for (const auto &entry : m_entries) {
        if (entry.state != PluginEntry::State::Loaded)
            continue;
        bool match = entry.id == wanted;
        for (const auto &alias : entry.aliases)
            match = match || alias.toLower() == wanted;
        if (!match)
            continue;
        if (!entry.runtime.available)
            return makeError(QStringLiteral("unavailable"),
                             QStringLiteral("%1 is not available: %2")
                                 .arg(entry.name, entry.runtime.reason));
        return &entry;
    }
    const QStringList known = availableLanguages();
    return makeError(QStringLiteral("unknown_language"),
                     QStringLiteral("unknown language \"%1\"; available: %2")
                         .arg(languageOrAlias,
                              known.isEmpty() ? QStringLiteral("none") : known.join(QStringLiteral(", "))));
}

QStringList PluginRegistry::availableLanguages() const
{
    QStringList ids;
    for (const auto &entry : m_entries) {
        if (entry.state == PluginEntry::State::Loaded && entry.runtime.available)
            ids.append(entry.id);
    }
    ids.sort();
    return ids;
}

} // namespace replhost::core
