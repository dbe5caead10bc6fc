# SPDX-FileCopyrightText: 2025-2026 The Napkin developers
# SPDX-License-Identifier: GPL-3.0-or-later
# A .deb of everything `cmake --install` puts under /usr: cpack -G DEB in the build directory
# (tools/package-check.sh builds one and checks it). dpkg-shlibdeps writes the Depends line from
# the binaries' NEEDED entries (Qt 6, QCustomPlot, {fmt}, libstdc++); nlohmann_json and CLI11 are
# header-only, so they are build dependencies only.
#
# napkin-probe needs no CUDA package: it links the CUDA runtime statically (gpu/CMakeLists.txt),
# and the runtime dlopen()s the driver's libcuda.so.1; cuBLASLt and NCCL are dlopen()ed too
# (gpu/cudalibs.cpp) and are optional. So its NEEDED entries are libc, libm, libstdc++ and libgcc
# only, and the package depends on no nvidia-* or cuda-* package: the probe needs an NVIDIA driver
# (580 or newer for CUDA 13), which users install from wherever their GPU's driver comes from.
if(TARGET napkin-probe)
    get_target_property(_napkin_cudart napkin_gpu CUDA_RUNTIME_LIBRARY)
    if(NOT _napkin_cudart STREQUAL "Static")
        message(WARNING "napkin_gpu links the CUDA runtime as '${_napkin_cudart}': the .deb would need "
                        "libcudart, which no Debian package the package could depend on provides")
    endif()
endif()

# The machine-readable Debian copyright file: Napkin's licence and those of what its binaries contain.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/napkin)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME napkin)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The Napkin developers")
set(CPACK_PACKAGE_CONTACT "The Napkin developers <napkin-maintainers@example.org>") # placeholder
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/napkin-llm/napkin")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "LLM training budget calculator: memory, FLOPs, time and roofline")
set(CPACK_PACKAGE_DESCRIPTION
    "Napkin turns a plan for training a large language model into its budgets
before anyone rents a GPU: a memory ledger per GPU (weights, gradients,
optimizer states, activations under the recompute policy, communication
buffers, offload), training FLOPs, days, GPU-hours, cost, energy, MFU and HFU,
a predicted step time from the parallel layout, and the roofline of every
operation of a transformer layer. Every number shows its formula and source.

The package holds the desktop app (napkin), the command line (napkin-cli), the
helper napkin-report (PDF, HTML, PNG and SVG reports) and, where it was built
with CUDA, napkin-probe, which measures the local NVIDIA GPU with nothing but
the NVIDIA driver.")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # napkin_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

include(CPack)
