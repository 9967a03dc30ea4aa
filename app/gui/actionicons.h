// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QIcon>

namespace replhost::gui {

// Icons for the run controls, painted in saturated colours that read on light and dark palettes
// alike (the style's media icons are near-black and vanish on a dark toolbar). The disabled
// look is derived by the style as for any icon. GUI thread only.
class ActionIcons {
public:
    static QIcon run();        // a green triangle
    static QIcon interrupt();  // a red square
};

} // namespace replhost::gui
