// SPDX-License-Identifier: Apache-2.0
#include "kernelspecs.h"

#include "replhostlogo.h"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace replhost::cli {

namespace {

std::string environment(const char *name)
{
    const char *value = std::getenv(name);
    return value ? value : "";
}

std::string userDataDir()
{
    if (const std::string dir = environment("JUPYTER_DATA_DIR"); !dir.empty())
        return dir;
    if (const std::string xdg = environment("XDG_DATA_HOME"); !xdg.empty())
        return xdg + "/jupyter";
    return environment("HOME") + "/.local/share/jupyter";
}

bool writeFile(const fs::path &path, const std::string &content)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    return bool(out);
}

} // namespace

std::string Kernelspecs::kernelsDir(const std::string &prefix, bool user)
{
    if (!prefix.empty())
        return fs::absolute(prefix).lexically_normal().string() + "/share/jupyter/kernels";
    if (user)
        return userDataDir() + "/kernels";
    return "/usr/local/share/jupyter/kernels";
}

std::vector<std::string> Kernelspecs::searchPath()
{
    std::vector<std::string> directories;
    const std::string jupyterPath = environment("JUPYTER_PATH");
    for (size_t start = 0; start < jupyterPath.size();) {
        const size_t end = std::min(jupyterPath.find(':', start), jupyterPath.size());
        if (end > start)
            directories.push_back(jupyterPath.substr(start, end - start) + "/kernels");
        start = end + 1;
    }
    directories.push_back(userDataDir() + "/kernels");
    directories.push_back("/usr/local/share/jupyter/kernels");
    directories.push_back("/usr/share/jupyter/kernels");
    return directories;
}

Result<std::string> Kernelspecs::write(const std::string &kernelsDir, const Spec &spec)
{
    const fs::path directory = fs::path(kernelsDir) / spec.name;
    std::error_code error;
    fs::create_directories(directory, error);
    if (error)
        return fail(ExitStatus::Failed, "cannot create " + directory.string() + ": " + error.message()
                                                + (kernelsDir.rfind("/usr/", 0) == 0 ? " (try --user or --prefix DIR)" : ""));

    Poco::JSON::Array argv;
    for (const std::string &argument : spec.argv)
        argv.add(argument);
    Poco::JSON::Object replhost;
    replhost.set("language", spec.language);
    if (!spec.contextId.empty())
        replhost.set("context", spec.contextId);
    Poco::JSON::Object metadata;
    metadata.set("replhost", replhost);
    Poco::JSON::Object kernel;
    kernel.set("argv", argv);
    kernel.set("display_name", spec.displayName);
    kernel.set("language", spec.language);
    // The kernel turns interrupt_request into replhost's interrupt, which keeps the state.
    kernel.set("interrupt_mode", "message");
    kernel.set("metadata", metadata);
    std::ostringstream json;
    kernel.stringify(json, 2);

    if (!writeFile(directory / "kernel.json", json.str() + "\n") || !writeFile(directory / "logo-svg.svg", kReplhostLogoSvg))
        return fail(ExitStatus::Failed, "cannot write the kernelspec in " + directory.string());
    return directory.string();
}

std::vector<Kernelspecs::Spec> Kernelspecs::find(const std::vector<std::string> &directories)
{
    std::vector<Spec> specs;
    std::set<std::string> seen;
    for (const std::string &kernels : directories) {
        std::error_code error;
        fs::directory_iterator it(kernels, error);
        if (error)
            continue;
        std::vector<fs::path> entries;
        for (const fs::directory_entry &entry : it)
            entries.push_back(entry.path());
        std::sort(entries.begin(), entries.end());
        for (const fs::path &entry : entries) {
            const std::string name = entry.filename().string();
            std::ifstream in(entry / "kernel.json");
            if (!in || seen.count(name))
                continue;
            seen.insert(name);  // Jupyter uses the first of a name, replhost's or not
            try {
                const Poco::JSON::Object::Ptr kernel = Poco::JSON::Parser().parse(in).extract<Poco::JSON::Object::Ptr>();
                const Poco::JSON::Object::Ptr metadata = kernel ? kernel->getObject("metadata") : nullptr;
                const Poco::JSON::Object::Ptr replhost = metadata ? metadata->getObject("replhost") : nullptr;
                if (!replhost)
                    continue;
                Spec spec{name, entry.string(), replhost->optValue<std::string>("language", ""),
                          replhost->optValue<std::string>("context", ""),
                          kernel->optValue<std::string>("display_name", ""), {}};
                if (const Poco::JSON::Array::Ptr argv = kernel->getArray("argv")) {
                    for (size_t i = 0; i < argv->size(); ++i)
                        spec.argv.push_back(argv->getElement<std::string>(unsigned(i)));
                }
                specs.push_back(std::move(spec));
            } catch (const std::exception &) {
                // Not JSON, or not shaped like a kernelspec: not one of replhost's.
            }
        }
    }
    return specs;
}

Result<void> Kernelspecs::remove(const Spec &spec)
{
    std::error_code error;
    fs::remove_all(spec.directory, error);
    if (error)
        return fail(ExitStatus::Failed, "cannot remove " + spec.directory + ": " + error.message());
    return {};
}

} // namespace replhost::cli
