// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

namespace replhost::java {

// Java (JDK 17 or newer) as a replhost language, on the JShell API. The driver is Java code
// compiled at build time into driver.jar and embedded as a resource, with a small JNI library
// (setenv, chdir, close-on-exec) embedded beside it; each context is one JVM running JShell's
// local execution engine. See README.md for what users get and the choices behind it.
//
// Settings (the "java" object of the host's language settings):
//   interpreter  the java launcher to use, a path or a name looked up on PATH; else
//                $REPLHOST_JAVA, else java on PATH
//   jvm_options  array of extra JVM options, after the defaults (so "-Xmx1g" or
//                "-XX:TieredStopAtLevel=4" override them)
//   classpath    array of jar files or class directories snippets can use (a string is split
//                at ':')
class JavaHandler : public QObject, public sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "java.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;
};

} // namespace replhost::java
