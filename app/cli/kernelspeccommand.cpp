// SPDX-License-Identifier: Apache-2.0
#include "kernelspeccommand.h"

#include "console.h"
#include "languagenames.h"
#include "serverlocator.h"
#include "siblingexecutable.h"
#include "texttable.h"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace replhost::cli {

namespace {

Poco::JSON::Object placed(const std::string &key, const std::vector<std::pair<std::string, std::string>> &specs)
{
    Poco::JSON::Array array;
    for (const auto &[name, directory] : specs) {
        Poco::JSON::Object entry;
        entry.set("name", name);
        entry.set("directory", directory);
        array.add(entry);
    }
    Poco::JSON::Object document;
    document.set(key, array);
    return document;
}

} // namespace

Result<ExitStatus> KernelspecCommand::execute()
{
    if (m_line.has("user") && m_line.has("prefix"))
        return m_line.usageError("give --user or --prefix, not both");
    if (m_line.action == "install")
        return install();
    if (m_line.action == "list")
        return list();
    return remove();
}

std::vector<std::string> KernelspecCommand::directories() const
{
    if (m_line.has("user") || m_line.has("prefix"))
        return {Kernelspecs::kernelsDir(m_line.value("prefix"), m_line.has("user"))};
    return Kernelspecs::searchPath();
}

Result<std::vector<Kernelspecs::Spec>> KernelspecCommand::specsToInstall(const std::string &kernel)
{
    std::vector<std::string> common{kernel, "-f", "{connection_file}"};
    std::vector<std::string> passedOn;
    if (!m_line.dataDir.empty()) {
        passedOn.push_back("--data-dir");
        passedOn.push_back(ServerLocator::dataDir(m_line.dataDir));
    }
    if (!m_line.workspace.empty()) {
        passedOn.push_back("--workspace");
        passedOn.push_back(m_line.workspace);
    }
    if (!m_line.url.empty()) {
        passedOn.push_back("--url");
        passedOn.push_back(m_line.url);
    }
    const auto spec = [&](const std::string &name, const std::string &language, const std::string &contextId,
                          const std::string &displayName) {
        Kernelspecs::Spec made{name, {}, language, contextId, displayName, common};
        made.argv.push_back(contextId.empty() ? "--language" : "--context");
        made.argv.push_back(contextId.empty() ? language : contextId);
        made.argv.insert(made.argv.end(), passedOn.begin(), passedOn.end());
        return made;
    };

    std::vector<Kernelspecs::Spec> specs;
    if (m_line.has("context")) {
        const std::string id = m_line.value("context");
        Result<HttpReply> reply = m_client.call("GET", m_client.scoped("/contexts/" + ApiClient::encode(id)));
        if (!reply)
            return reply.failure();
        const Poco::JSON::Object::Ptr context = reply->object();
        if (!context)
            return fail(ExitStatus::Failed, "the server answered with something that is not a context");
        const std::string language = context->optValue<std::string>("language", "");
        const std::string contextName = context->optValue<std::string>("name", "");
        const std::string shortId = id.substr(0, 8);
        specs.push_back(spec("replhost-" + language + "-" + shortId, language, id,
                             languageDisplayName(language) + " (replhost, " + (contextName.empty() ? shortId : contextName)
                                     + ")"));
        return specs;
    }

    std::vector<std::string> languages = m_line.values("language");
    if (languages.empty()) {
        Result<HttpReply> reply = m_client.call("GET", "/v1/languages");
        if (!reply) {
            Failure failure = reply.failure();
            failure.message += "; the languages can also be named with -l LANGUAGE";
            return failure;
        }
        const Poco::JSON::Array::Ptr list = reply->array();
        for (size_t i = 0; list && i < list->size(); ++i) {
            const Poco::JSON::Object::Ptr language = list->getObject(unsigned(i));
            if (language && language->optValue<bool>("available", false))
                languages.push_back(language->optValue<std::string>("id", ""));
        }
    }
    for (const std::string &language : languages) {
        // A plugin id names a directory here: letters, digits, '-' and '_' only.
        const bool isId = !language.empty() && std::isalnum(static_cast<unsigned char>(language[0]))
                && std::all_of(language.begin(), language.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
                   });
        if (!isId)
            return m_line.usageError("'" + language + "' is not a language id");
        specs.push_back(spec("replhost-" + language, language, {}, languageDisplayName(language) + " (replhost)"));
    }
    return specs;
}

Result<ExitStatus> KernelspecCommand::install()
{
    if (!m_line.arguments.empty())
        return m_line.usageError("kernelspec install takes no arguments");
    if (m_line.has("context") && m_line.has("language"))
        return m_line.usageError("a kernelspec bound with --context runs that context's language: drop -l");
    const std::string kernel = m_line.has("kernel") ? m_line.value("kernel") : siblingExecutable("replhost-kernel");
    if (kernel.empty())
        return fail(ExitStatus::Failed, "no replhost-kernel found beside replhost-cli or on PATH; name it with --kernel PATH");

    Result<std::vector<Kernelspecs::Spec>> specs = specsToInstall(kernel);
    if (!specs)
        return specs.failure();
    const std::string kernels = Kernelspecs::kernelsDir(m_line.value("prefix"), m_line.has("user"));
    std::vector<std::pair<std::string, std::string>> installed;
    for (const Kernelspecs::Spec &spec : *specs) {
        Result<std::string> directory = Kernelspecs::write(kernels, spec);
        if (!directory)
            return directory.failure();
        installed.emplace_back(spec.name, *directory);
        if (!m_line.json)
            Console::out("installed " + spec.name + " (" + spec.displayName + ") in " + *directory + "\n");
    }
    if (m_line.json)
        Console::json(placed("installed", installed));
    return ExitStatus::Ok;
}

Result<ExitStatus> KernelspecCommand::list()
{
    if (!m_line.arguments.empty())
        return m_line.usageError("kernelspec list takes no arguments");
    const std::vector<Kernelspecs::Spec> specs = Kernelspecs::find(directories());
    if (m_line.json) {
        Poco::JSON::Array array;
        for (const Kernelspecs::Spec &spec : specs) {
            Poco::JSON::Object entry;
            entry.set("name", spec.name);
            entry.set("display_name", spec.displayName);
            entry.set("language", spec.language);
            entry.set("context", spec.contextId.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(spec.contextId));
            entry.set("directory", spec.directory);
            Poco::JSON::Array argv;
            for (const std::string &argument : spec.argv)
                argv.add(argument);
            entry.set("argv", argv);
            array.add(entry);
        }
        std::ostringstream out;
        array.stringify(out);
        Console::json(out.str());
        return ExitStatus::Ok;
    }
    TextTable table({"NAME", "LANGUAGE", "CONTEXT", "DIRECTORY"});
    for (const Kernelspecs::Spec &spec : specs)
        table.addRow({spec.name, spec.language, spec.contextId.empty() ? "(new)" : spec.contextId, spec.directory});
    Console::out(table.text());
    return ExitStatus::Ok;
}

Result<ExitStatus> KernelspecCommand::remove()
{
    if (m_line.arguments.empty())
        return m_line.usageError("say which kernelspecs: kernelspec remove NAME...");
    const std::vector<Kernelspecs::Spec> specs = Kernelspecs::find(directories());
    std::vector<const Kernelspecs::Spec *> chosen;
    for (const std::string &name : m_line.arguments) {
        const auto it = std::find_if(specs.begin(), specs.end(), [&](const Kernelspecs::Spec &spec) { return spec.name == name; });
        if (it == specs.end())
            return fail(ExitStatus::Failed, "no replhost kernelspec named " + name + " (replhost-cli kernelspec list shows them)");
        chosen.push_back(&*it);
    }
    std::vector<std::pair<std::string, std::string>> removed;
    for (const Kernelspecs::Spec *spec : chosen) {
        if (Result<void> gone = Kernelspecs::remove(*spec); !gone)
            return gone.failure();
        removed.emplace_back(spec->name, spec->directory);
        if (!m_line.json)
            Console::out("removed " + spec->name + " from " + spec->directory + "\n");
    }
    if (m_line.json)
        Console::json(placed("removed", removed));
    return ExitStatus::Ok;
}

} // namespace replhost::cli
