// SPDX-License-Identifier: Apache-2.0
#pragma once

// Versions owned by the SDK. A plugin records the SDK version it was built against in its metadata
// ("sdkVersion": "1.0"); the host refuses plugins whose major differs from its own before loading
// any of their code.
#define REPLHOST_SDK_VERSION_MAJOR 1
#define REPLHOST_SDK_VERSION_MINOR 1
#define REPLHOST_SDK_VERSION_STRING "1.1"

// The worker protocol (docs/worker-protocol.md) is versioned on its own: a driver and the host's
// WorkerProcess must agree on it, independently of the C++ ABI.
#define REPLHOST_WORKER_PROTOCOL_VERSION 1

// Interface id of LanguageHandler. The trailing number is the SDK major.
#define REPLHOST_LANGUAGEHANDLER_IID "org.replhost.LanguageHandler/1"

namespace replhost::sdk {
inline constexpr int kSdkVersionMajor = REPLHOST_SDK_VERSION_MAJOR;
inline constexpr int kSdkVersionMinor = REPLHOST_SDK_VERSION_MINOR;
inline constexpr int kWorkerProtocolVersion = REPLHOST_WORKER_PROTOCOL_VERSION;
} // namespace replhost::sdk
