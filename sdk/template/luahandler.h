// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

// Lua 5.3 as a replhost language: driver.lua, embedded as a resource, runs every execution as a
// chunk of one long-lived lua5.3 per context, so globals, functions and loaded modules persist.
// The driver needs two Debian packages besides lua5.3: lua-posix (file descriptors, setenv,
// chdir, signals) and lua-dkjson (JSON). Debian's lua-posix has no build for Lua 5.4, which is
// why this plugin runs Lua 5.3.
//
// Settings (the "lua" object of the host's language settings):
//   interpreter  program to use, a path or a name looked up on PATH; else $REPLHOST_LUA,
//                else lua5.3 on PATH
//
// Threading: the host calls every method from its engine thread.
class LuaHandler : public QObject, public replhost::sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "lua.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    // Finds the interpreter and checks that it is Lua 5.3 with the modules the driver needs;
    // when not, the reason says which Debian package to install.
    replhost::sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    // Never null: a FailedSession with the reason when the runtime or the driver is unusable.
    std::unique_ptr<replhost::sdk::Session> createSession(
        const replhost::sdk::RuntimeInfo &runtime,
        const replhost::sdk::SessionOptions &options) override;
};
