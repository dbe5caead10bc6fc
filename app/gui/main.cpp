// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin: the desktop app. Parses arguments and hands over to napkin_app.
#include "app.h"

int main(int argc, char** argv) { return napkin::app::runApp(argc, argv); }
