// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// cuBLASLt and NCCL loaded at run time (dlopen), so napkin-probe starts without them and the profile's
// `libraries` section says what is missing. The headers are used for types only.

#include "profile.h"

#include <cublasLt.h>
#include <nccl.h>

namespace napkin::gpu {

struct CublasLt {
    decltype(&::cublasLtCreate) create = nullptr;
    decltype(&::cublasLtDestroy) destroy = nullptr;
    decltype(&::cublasLtGetVersion) getVersion = nullptr;
    decltype(&::cublasLtMatmulDescCreate) descCreate = nullptr;
    decltype(&::cublasLtMatmulDescDestroy) descDestroy = nullptr;
    decltype(&::cublasLtMatmulDescSetAttribute) descSetAttribute = nullptr;
    decltype(&::cublasLtMatrixLayoutCreate) layoutCreate = nullptr;
    decltype(&::cublasLtMatrixLayoutDestroy) layoutDestroy = nullptr;
    decltype(&::cublasLtMatmulPreferenceCreate) preferenceCreate = nullptr;
    decltype(&::cublasLtMatmulPreferenceDestroy) preferenceDestroy = nullptr;
    decltype(&::cublasLtMatmulPreferenceSetAttribute) preferenceSetAttribute = nullptr;
    decltype(&::cublasLtMatmulAlgoGetHeuristic) algoGetHeuristic = nullptr;
    decltype(&::cublasLtMatmul) matmul = nullptr;
    LibraryInfo info;
};

struct Nccl {
    decltype(&::ncclGetVersion) getVersion = nullptr;
    decltype(&::ncclCommInitAll) commInitAll = nullptr;
    decltype(&::ncclCommDestroy) commDestroy = nullptr;
    decltype(&::ncclAllReduce) allReduce = nullptr;
    decltype(&::ncclGroupStart) groupStart = nullptr;
    decltype(&::ncclGroupEnd) groupEnd = nullptr;
    decltype(&::ncclGetErrorString) getErrorString = nullptr;
    LibraryInfo info;
};

/** Loads libcublasLt.so.13 (then libcublasLt.so, then /usr/local/cuda/lib64); info says what happened.
 *  The library stays loaded. */
CublasLt loadCublasLt();

/** Loads libnccl.so.2 (then libnccl.so, then /usr/local/cuda/lib64). */
Nccl loadNccl();

} // namespace napkin::gpu
