// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Catalogues compiled into every binary: GPUs (dense peaks with sources), model presets, precision
// plans. Each loads strictly from a string or stream: an unknown key is an error naming it.

#include "dtype.h"
#include "errors.h"
#include "model.h"

#include <array>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace napkin::core {

struct Calibration; // calibration.h

struct GpuSpec {
    std::string id;
    std::string name;
    std::string vendor;
    double memoryBytes = 0;
    double bandwidthBytesPerSecond = 0;
    // Dense (no 2:4 sparsity) peak FLOP/s per PeakColumn; 0 where the device has no such mode.
    std::array<double, 6> denseFlopsPerSecond{};
    double fp64FlopsPerSecond = 0;
    bool sparseListed = false; // the vendor sheet prints sparse figures (halved here)
    double tdpWatts = 0;       // 0: not published
    std::string interconnectName;
    double interconnectBytesPerSecond = 0;
    std::string hostLinkName;
    double hostLinkBytesPerSecond = 0;
    // Achievable rates (what the best library reaches, not the spec sheet): the bf16/fp16 dense GEMM
    // rate of a maximum-achievable-matmul sweep and a STREAM-class bandwidth, each published per GPU
    // model. Where none is published, loadGpus fills in the median achieved/spec ratio of the GPUs
    // that publish one, and says so in sourceAchievable. core/achievable.h.
    double achievableMatmulFlops = 0;
    double achievableMatmulFp16Flops = 0; // fp16 where published separately (0: the bf16 share applies)
    double achievableMatmulFp8Flops = 0;  // fp8 (e4m3) where published (0: the bf16 share of the fp8 peak)
    double achievableMatmulFp4Flops = 0;  // fp4 where published (0: the bf16 share of the fp4 peak)
    // The GEMM shape (m, n, k) each figure was measured at; zeros: not stated (taken as 8192³, the
    // conventional benchmark cube). core/achievable.h calibrates its shape model at this point.
    std::array<double, 3> achievableMatmulShape{};
    std::array<double, 3> achievableMatmulFp16Shape{};
    std::array<double, 3> achievableMatmulFp8Shape{};
    std::array<double, 3> achievableMatmulFp4Shape{};
    double achievableBandwidth = 0;
    // Sustained against burst: the share of the matmul figure a GPU held at its power limit keeps
    // (bf16 applies to the 16-bit and tf32 columns; fp8 to fp8). 1: not measured.
    double sustainedShare16 = 1, sustainedShareFp8 = 1;
    std::string sourceSustained;
    std::string sourceAchievable;
    bool achievablePublished = false; // false: the median-ratio fallback
    int smCount = 0;                  // streaming multiprocessors (compute units): GEMM wave quantisation
    int computeCapability = 0;        // NVIDIA SM version ×10 (80 = Ampere, 90 = Hopper); 0 elsewhere
    std::string sourceMemory, sourceBandwidth, sourceFlops, sourceTdp, sourceInterconnect;
    std::vector<std::string> unsourced;
    std::string notes;
    std::string origin = "spec sheet"; // "measured" for a calibration profile
    // Set when the values come from a napkin-probe profile (calibration.h): what was measured, the
    // spec values they replaced, and the measured points.
    std::shared_ptr<const Calibration> calibration;

    double peak(PeakColumn c) const { return denseFlopsPerSecond[static_cast<std::size_t>(c)]; }
};

struct PrecisionPlan {
    std::string id;
    std::string name;
    std::string description;
    std::string source;
    DType weights = DType::Bf16;
    DType gradients = DType::Bf16;
    std::optional<DType> master; // nullopt: no separate master copy
    DType optimizer = DType::Fp32;
    DType activations = DType::Bf16;
    DType compute = DType::Bf16;
};

// A name people type for a catalogue id (resources/aliases.json): one id with a note, or several
// candidates when the name is ambiguous ("a100": 40 or 80 GB, SXM or PCIe), which is refused.
struct Alias {
    std::string alias;
    std::string id;
    std::string note;
    std::vector<std::string> candidates;
};

struct Catalog {
    std::vector<GpuSpec> gpus;
    std::vector<ModelSpec> models;
    std::vector<PrecisionPlan> plans;
    std::vector<Alias> gpuAliases, modelAliases;

    const GpuSpec* gpu(std::string_view id) const;
    const ModelSpec* model(std::string_view id) const;
    const PrecisionPlan* plan(std::string_view id) const;
    const Alias* gpuAlias(std::string_view name) const;
    const Alias* modelAlias(std::string_view name) const;
    std::vector<std::string> gpuIdList() const; // ids, then aliases: the candidates of a suggestion
    std::vector<std::string> modelIdList() const;
    std::string gpuIds() const;
    std::string modelIds() const;
    std::string planIds() const;
};

std::vector<GpuSpec> loadGpus(std::string_view text, Errors& errors);
// napkin.aliases/1: {"gpus": [{"alias", "id", "note"} | {"alias", "ambiguous": [ids]}], "models": [...]}.
void loadAliases(std::string_view text, Catalog& catalog, Errors& errors);
std::vector<ModelSpec> loadModels(std::string_view text, Errors& errors);
std::vector<PrecisionPlan> loadPlans(std::string_view text, Errors& errors);
std::vector<GpuSpec> loadGpus(std::istream& in, Errors& errors);
std::vector<ModelSpec> loadModels(std::istream& in, Errors& errors);
std::vector<PrecisionPlan> loadPlans(std::istream& in, Errors& errors);

// The catalogues compiled into the binary (resources/*.json). Loading them is checked by tests;
// a failure here is a build defect and throws std::logic_error.
const Catalog& builtinCatalog();

// Raw embedded resource text by file name ("gpus.json", "models.json", "plans.json",
// "default-scenario.json"); empty when unknown.
std::string_view embeddedResource(std::string_view name);

} // namespace napkin::core
