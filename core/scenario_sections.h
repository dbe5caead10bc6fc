// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Readers of the sections of a scenario document, for parseScenario (core/scenario.cpp). Each reads
// its section strictly into the scenario and adds an error naming the field for anything invalid.

#include "catalog.h"
#include "jsonreader.h"
#include "scenario.h"

namespace napkin::core::detail {

void readModel(const nlohmann::json& node, const Catalog& catalog, Scenario& sc, Errors& errors,
               const std::string& baseDir, const FileReader& reader);
void readTraining(const nlohmann::json& node, Scenario& sc, Errors& errors);
void readPrecision(const nlohmann::json& node, const Catalog& catalog, Scenario& sc, Errors& errors);
void readOptimizer(const nlohmann::json& node, Scenario& sc, Errors& errors);
void readCluster(const nlohmann::json& node, const Catalog& catalog, Scenario& sc, Errors& errors,
                 const std::string& baseDir, const FileReader& reader);
void readParallel(const nlohmann::json& node, Scenario& sc, Errors& errors);
void readStepTime(const nlohmann::json& node, Scenario& sc, Errors& errors); // resolves the framework
void readFlops(const nlohmann::json& node, Scenario& sc, Errors& errors);
void readOverhead(const nlohmann::json& node, Scenario& sc, Errors& errors);
// core/scenario_offload.cpp: the offload section, the cluster's host keys, and the offload checks.
void readOffload(const nlohmann::json& node, Scenario& sc, Errors& errors);
void readClusterHost(ObjectReader& r, ClusterConfig& c);
void checkOffload(const Scenario& sc, Errors& errors);
// scenario_finetune.cpp: the finetune section (after precision: its base dtype checks the weights),
// optimizer.paged, and the checks against the model and the offload section.
void readFinetune(const nlohmann::json& node, Scenario& sc, Errors& errors);
void readPaged(ObjectReader& r, PagedOptimizer& paged);
// precision.recipe and precision.low_precision_gemms, once precision.compute is known.
void readRecipe(ObjectReader& r, PrecisionConfig& p);
void checkFinetune(Scenario& sc, Errors& errors);
// optimizer.implementation as it appears in an error's value: "\"foreach\"" or "\"forloop\"" for
// PyTorch's unfused updates (priced for Adam(W) and PyTorch's own states only), "" otherwise.
const char* unfusedOptimizerValue(const Scenario& sc);
// core/scenario_checks.cpp: cross-section checks, once each field is valid on its own: the layout against the GPU
// count, heads, layers and sequence; ZeRO against FSDP; the compute dtype against the GPU.
void checkScenario(Scenario& sc, Errors& errors);

} // namespace napkin::core::detail
