// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cudalibs.h"

#include <dlfcn.h>

#include <initializer_list>

namespace napkin::gpu {

namespace {

void* openFirst(std::initializer_list<const char*> names, std::string& error)
{
    for (const char* n : names) {
        if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
            error.clear();
            return h;
        }
        const char* e = dlerror();
        if (error.empty()) // the first name's reason is the useful one
            error = e ? e : "dlopen failed";
    }
    return nullptr;
}

// Resolves one symbol into `fn`; records the first missing name.
template <typename Fn>
void resolve(void* lib, const char* name, Fn& fn, std::string& missing)
{
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    if (!fn && missing.empty())
        missing = std::string("symbol ") + name + " not found";
}

} // namespace

CublasLt loadCublasLt()
{
    CublasLt l;
    void* lib =
        openFirst({"libcublasLt.so.13", "libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so.13"}, l.info.error);
    if (!lib)
        return l;
    std::string missing;
    resolve(lib, "cublasLtCreate", l.create, missing);
    resolve(lib, "cublasLtDestroy", l.destroy, missing);
    resolve(lib, "cublasLtGetVersion", l.getVersion, missing);
    resolve(lib, "cublasLtMatmulDescCreate", l.descCreate, missing);
    resolve(lib, "cublasLtMatmulDescDestroy", l.descDestroy, missing);
    resolve(lib, "cublasLtMatmulDescSetAttribute", l.descSetAttribute, missing);
    resolve(lib, "cublasLtMatrixLayoutCreate", l.layoutCreate, missing);
    resolve(lib, "cublasLtMatrixLayoutDestroy", l.layoutDestroy, missing);
    resolve(lib, "cublasLtMatmulPreferenceCreate", l.preferenceCreate, missing);
    resolve(lib, "cublasLtMatmulPreferenceDestroy", l.preferenceDestroy, missing);
    resolve(lib, "cublasLtMatmulPreferenceSetAttribute", l.preferenceSetAttribute, missing);
    resolve(lib, "cublasLtMatmulAlgoGetHeuristic", l.algoGetHeuristic, missing);
    resolve(lib, "cublasLtMatmul", l.matmul, missing);
    if (!missing.empty()) {
        l.info.error = missing;
        return l;
    }
    l.info.loaded = true;
    l.info.error.clear();
    l.info.version = static_cast<int>(l.getVersion());
    return l;
}

Nccl loadNccl()
{
    Nccl n;
    void* lib = openFirst({"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2"}, n.info.error);
    if (!lib)
        return n;
    std::string missing;
    resolve(lib, "ncclGetVersion", n.getVersion, missing);
    resolve(lib, "ncclCommInitAll", n.commInitAll, missing);
    resolve(lib, "ncclCommDestroy", n.commDestroy, missing);
    resolve(lib, "ncclAllReduce", n.allReduce, missing);
    resolve(lib, "ncclGroupStart", n.groupStart, missing);
    resolve(lib, "ncclGroupEnd", n.groupEnd, missing);
    resolve(lib, "ncclGetErrorString", n.getErrorString, missing);
    if (!missing.empty()) {
        n.info.error = missing;
        return n;
    }
    n.info.loaded = true;
    n.info.error.clear();
    int v = 0;
    if (n.getVersion(&v) == ncclSuccess)
        n.info.version = v;
    return n;
}

} // namespace napkin::gpu
