// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/languagehandler.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QtPlugin>

// A plugin that provides several languages, found when the host loads it rather than written in
// its metadata (SDK 1.3): the Jupyter plugin makes each installed kernelspec a language.
//
// Such a plugin declares "languages": "discovered" in its metadata, whose "id", "name" and
// "version" then name the plugin itself, and its root object implements LanguageProvider
// (Q_INTERFACES(replhost::sdk::LanguageProvider)) instead of LanguageHandler. The plugin's
// interface id stays REPLHOST_LANGUAGEHANDLER_IID, so the host checks its SDK major before
// loading it exactly as for any plugin. A host older than SDK 1.3 lists it as broken ("does not
// implement"); plugins with one language from their metadata load unchanged.
namespace replhost::sdk {

// One language a provider offers: what the metadata says for a plugin of one language, plus the
// handler that probes it and creates its sessions.
struct ProvidedLanguage {
    QString id;              // the rules of the metadata's "id"; unique among the provider's
    QString name;            // display name
    QStringList aliases;     // dropped by the host where another language has the name
    QStringList extensions;  // with the dot
    QString lexer;
    QJsonObject capabilities;
    // Owned by the provider; lives as long as the plugin (the host never unloads one).
    LanguageHandler *handler = nullptr;
};

// What a provider found.
struct LanguageCatalog {
    QList<ProvidedLanguage> languages;
    // When `languages` is empty: why, and what to install ("no Jupyter kernelspec found in ...").
    QString reason;
};

// Threading: called from the host's engine thread, like LanguageHandler.
class LanguageProvider {
public:
    virtual ~LanguageProvider() = default;

    // The languages this machine has now. Called once when the host discovers its plugins (and
    // again when it rediscovers them); may block briefly, like probe(). `settings` is the
    // plugin's object in the host's language configuration (keyed by the plugin's id); each
    // language's own handler is probed with the object of its own id.
    virtual LanguageCatalog languages(const QJsonObject &settings) = 0;
};

} // namespace replhost::sdk

#define REPLHOST_LANGUAGEPROVIDER_IID "org.replhost.LanguageProvider/1"
Q_DECLARE_INTERFACE(replhost::sdk::LanguageProvider, REPLHOST_LANGUAGEPROVIDER_IID)
