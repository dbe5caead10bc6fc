// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// napkin-probe's driver: finds the devices, maps failures to a status, runs the suite within the mode's
// time cap and reports progress. Never throws; every outcome is a Profile.

#include "options.h"
#include "profile.h"

#include <functional>
#include <string>

namespace napkin::gpu {

/** Receives one JSON progress line (without newline):
 *  {"event":"progress","step":3,"of":14,"id":"hbm_triad","fraction":0.214} */
using ProgressSink = std::function<void(const std::string& line)>;

/** The progress line for a step (1-based) of `of`. */
std::string progressLine(int step, int of, const std::string& id);

Profile runProbe(const Options& options, const ProgressSink& progress);

/** All-reduce over every visible GPU through NCCL (nccl-tests recipe); appends an nccl_allreduce link
 *  or says why not in `skippedReason`. */
struct Nccl;
void measureAllReduce(const Nccl& nccl, int devices, bool quick, double capSeconds, Profile& out,
                      std::string& skippedReason);

} // namespace napkin::gpu
