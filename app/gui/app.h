// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The napkin executable's behaviour: window, or --scenario FILE --screenshot OUT.png [--size WxH].

namespace napkin::app {

int runApp(int argc, char** argv);

} // namespace napkin::app
