// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-cli: the Napkin engine headless. All logic lives in napkin_cli / napkin_core.
#include "cli.h"

#include <iostream>

int main(int argc, char** argv) { return napkin::cli::run(argc, argv, std::cout, std::cerr); }
