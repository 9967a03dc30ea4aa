// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>
#include <replhost/sdk/result.h>

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

class QPluginLoader;

namespace replhost::sdk {
class LanguageProvider;
}

namespace replhost::core {

// One directory the registry searches, and why it is on the list.
struct PluginSearchDir {
    QString path;    // absolute and clean
    // "environment" (REPLHOST_PLUGIN_PATH), "configured" (--plugin-path, EngineConfig),
    // "user" (under the home directory), "local" (/usr/local), "system" (the distribution's
    // multiarch directory) or "install" (relative to the executable).
    QString origin;

    QJsonObject toJson() const;  // {"directory", "origin", "exists"}
};

// What the host knows of one plugin file, whether it loaded or not.
struct PluginEntry {
    enum class State { Loaded, Incompatible, Broken, Shadowed };

    QString fileName;   // absolute path of the plugin file
    PluginSearchDir foundIn;  // the searched directory that holds it
    State state = State::Broken;
    QString error;      // why it is not Loaded
    // From the metadata (may be empty for a Broken plugin).
    QString id, name, version, sdkVersion, lexer;
    QStringList aliases, extensions;
    QJsonObject capabilities;
    // The id of the plugin that provides this language among others it discovered when loaded
    // (metadata "languages": "discovered", sdk/languageprovider.h); empty for a plugin of one
    // language. Such a plugin that found no language has one entry, with the plugin's own id,
    // no handler and the provider's reason as its runtime's.
    QString provider;
    // From probe() (only for Loaded plugins).
    sdk::RuntimeInfo runtime;

    sdk::LanguageHandler *handler = nullptr;  // owned by the registry's loader; null unless Loaded

    static QString stateName(State state);
    QJsonObject toJson() const;  // for the faces: everything above but the handler pointer
};

// Finds, validates and loads language plugins.
//
// Discovery order (first plugin with a given id wins; later ones are listed as Shadowed):
// REPLHOST_PLUGIN_PATH (colon-separated), the configured extra paths, the user's
// ~/.local/lib/replhost/plugins (where `cmake --install --prefix ~/.local` puts a plugin) and
// $XDG_DATA_HOME/replhost/plugins (~/.local/share/replhost/plugins), /usr/local/lib/replhost/
// plugins (a plugin installed with CMake's default prefix), the distribution's
// /usr/lib/<multiarch triplet>/replhost/plugins (packaged plugins), and last the host's own
// install tree, <executable dir>/../<libdir>/replhost/plugins (a relocated install, and the build
// tree, which has the same layout).
// A plugin whose metadata says "languages": "discovered" is a LanguageProvider: each language it
// finds is an entry of its own (same file), and each alias of one that another language has as
// its id or alias is dropped, so a plugin of one language always keeps its names.
// The metadata is read and checked (IID, SDK major, required fields, the types of optional
// ones) before a plugin's code is loaded; a plugin that fails any step is kept in the list with
// its reason and never aborts the host.
//
// Threading: engine thread only.
class PluginRegistry : public QObject {
    Q_OBJECT
public:
    explicit PluginRegistry(QObject *parent = nullptr);
    ~PluginRegistry() override;

    // The directories of the discovery order above, duplicates removed (the first keeps its
    // place: on a /usr install the install tree is the system directory).
    static QList<PluginSearchDir> standardSearchPaths(const QStringList &extraPaths);

    // Scans `searchDirs` (in order), loads compatible plugins and probes their runtimes with
    // `languageSettings[id]`. Replaces what a previous discover() found. A directory that does
    // not exist is kept in searchDirs() and skipped.
    void discover(const QList<PluginSearchDir> &searchDirs, const QJsonObject &languageSettings);
    // The same, for directories that are all "configured".
    void discover(const QStringList &searchPaths, const QJsonObject &languageSettings);

    const QList<PluginEntry> &entries() const { return m_entries; }
    // What the last discover() searched, in order.
    const QList<PluginSearchDir> &searchDirs() const { return m_searchDirs; }

    // The loaded plugin for a language id or alias (case-insensitive). Errors: "unknown_language"
    // (message lists the known ones), "unavailable" (plugin loaded but runtime missing; message
    // says what to install).
    Result<const PluginEntry *> resolve(const QString &languageOrAlias) const;

    // Ids of loaded plugins whose runtime is available, sorted.
    QStringList availableLanguages() const;

private:
    void addProvidedLanguages(const PluginEntry &plugin, sdk::LanguageProvider &provider,
                              const QJsonObject &languageSettings);
    void dropTakenAliases();

    QList<PluginSearchDir> m_searchDirs;
    QList<PluginEntry> m_entries;
    QList<QPluginLoader *> m_loaders;
};

} // namespace replhost::core
