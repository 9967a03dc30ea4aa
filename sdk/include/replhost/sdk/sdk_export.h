// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QtCore/qglobal.h>

#if defined(REPLHOST_SDK_BUILDING)
#define REPLHOST_SDK_EXPORT Q_DECL_EXPORT
#else
#define REPLHOST_SDK_EXPORT Q_DECL_IMPORT
#endif
