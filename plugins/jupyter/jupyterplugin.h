// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "kernelspec.h"

#include <replhost/sdk/languageprovider.h>

#include <QObject>

#include <memory>
#include <vector>

namespace replhost::jupyter {

// The language of one kernelspec: probe() finds the program its argv starts, createSession()
// a KernelSession. Owned by the plugin.
class KernelSpecHandler : public sdk::LanguageHandler {
public:
    KernelSpecHandler(QString languageId, KernelSpec spec);

    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;

private:
    const QString m_languageId;
    const KernelSpec m_spec;
};

// The plugin: every installed Jupyter kernelspec is a language "jupyter-<name>", with the
// kernelspec's language (lowercased, "r") as its alias where no other language has that name.
class JupyterPlugin : public QObject, public sdk::LanguageProvider {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "jupyter.json")
    Q_INTERFACES(replhost::sdk::LanguageProvider)

public:
    // settings: "kernelspec_path" (array of directories holding kernelspecs, searched before
    // Jupyter's own), "exclude" (array of kernelspec names to leave out).
    sdk::LanguageCatalog languages(const QJsonObject &settings) override;

private:
    std::vector<std::unique_ptr<KernelSpecHandler>> m_handlers;
};

} // namespace replhost::jupyter
