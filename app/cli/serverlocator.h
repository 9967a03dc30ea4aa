// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "result.h"

#include <string>

namespace replhost::cli {

// Where a server is and the token it wants, with where each came from (for messages).
struct ServerEndpoint {
    std::string url;          // "http://127.0.0.1:49999" or with a base path; no trailing slash
    std::string urlSource;    // "--url", "REPLHOST_URL" or the URL file's path
    std::string token;
    std::string tokenSource;  // "--token", "REPLHOST_TOKEN" or the token file's path
};

// Finds the server replhost-cli talks to, in this order:
//   URL:   --url, else $REPLHOST_URL, else the URL file <data dir>/server.json that a running
//          replhost-server writes ({"url": ..., "pid": ...}). A file whose pid no longer runs is
//          stale (the server did not exit cleanly) and is reported as such, never used.
//   token: --token, else $REPLHOST_TOKEN, else <data dir>/token.
//   data dir: --data-dir, else $REPLHOST_DATA_DIR, else $XDG_DATA_HOME/replhost, else
//          $HOME/.local/share/replhost. This repeats core::EngineConfig::resolvedDataDir(), which
//          replhost-cli cannot call because it links no Qt; the two must say the same.
//
// Failures: Usage (a malformed --url or $REPLHOST_URL), Unreachable (no URL file, a stale or
// unreadable one), Unauthorized (no token anywhere). Threading: any; reads the environment.
class ServerLocator {
public:
    struct Overrides {
        std::string url;      // --url
        std::string token;    // --token
        std::string dataDir;  // --data-dir
    };

    static Result<ServerEndpoint> locate(const Overrides &overrides);

    // The data dir by the rule above (absolute).
    static std::string dataDir(const std::string &overrideDir);

    // Checks an http:// URL and returns it without a trailing slash.
    static Result<std::string> checkUrl(const std::string &url, const std::string &source);

    static constexpr const char *kUrlFileName = "server.json";
    static constexpr const char *kTokenFileName = "token";
};

} // namespace replhost::cli
