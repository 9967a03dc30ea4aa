// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

namespace replhost::perl {

// Perl 5 (5.22 or newer, core modules only) as a replhost language: driver.pl, embedded as a
// resource, evaluates each run in package main of one long-lived perl per context, so subs,
// `our` variables, loaded modules, top-level `my` variables and pragmas such as `use strict`
// persist from one execution to the next.
//
// Settings (the "perl" object of the host's language settings):
//   interpreter  program to use, a path or a name looked up on PATH; else $REPLHOST_PERL,
//                else perl on PATH
class PerlHandler : public QObject, public sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "perl.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;
};

} // namespace replhost::perl
