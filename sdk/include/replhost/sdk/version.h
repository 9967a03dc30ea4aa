// SPDX-License-Identifier: Apache-2.0
#pragma once

// Versions owned by the SDK. A plugin records the SDK version it was built against in its metadata
// ("sdkVersion": "1.0"); the host refuses plugins whose major differs from its own before loading
// any of their code.
#define REPLHOST_SDK_VERSION_MAJOR 1
#define REPLHOST_SDK_VERSION_MINOR 3
#define REPLHOST_SDK_VERSION_STRING "1.3"

// The worker protocol (docs/worker-protocol.md) is versioned on its own: a driver and the host's
// WorkerProcess must agree on it, independently of the C++ ABI.
#define REPLHOST_WORKER_PROTOCOL_VERSION 1

// Additions to the protocol that an older host would reject (docs/worker-protocol.md §1): the
// host names the revision it takes in `init`, and a driver uses nothing newer. A driver must
// match the version exactly; the revision only grows within it.
//   1: `display_id` and `update` on `display`, the `clear_output` event
//   2: `input` on `execute`, the `input_request` event and the `input_reply` request
#define REPLHOST_WORKER_PROTOCOL_REVISION 2

// Interface id of LanguageHandler. The trailing number is the SDK major.
#define REPLHOST_LANGUAGEHANDLER_IID "org.replhost.LanguageHandler/1"

namespace replhost::sdk {
inline constexpr int kSdkVersionMajor = REPLHOST_SDK_VERSION_MAJOR;
inline constexpr int kSdkVersionMinor = REPLHOST_SDK_VERSION_MINOR;
inline constexpr int kWorkerProtocolVersion = REPLHOST_WORKER_PROTOCOL_VERSION;
inline constexpr int kWorkerProtocolRevision = REPLHOST_WORKER_PROTOCOL_REVISION;
} // namespace replhost::sdk
