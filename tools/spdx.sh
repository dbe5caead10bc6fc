#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2025-2026 The Napkin developers
# SPDX-License-Identifier: GPL-3.0-or-later
# Every source file names its licence (REUSE / SPDX): C++ and CUDA sources, CMake files, scripts.
#   tools/spdx.sh          list the files without an SPDX-License-Identifier line; exit 1 if any
#   tools/spdx.sh --add    add the two header lines to them (after a #! line)
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
while IFS= read -r f; do
    head -n 5 "$f" | grep -q 'SPDX-License-Identifier:' || missing+=("$f")
done < <(git ls-files -- '*.cpp' '*.h' '*.cu' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt' '*.sh' '.ci/run')
if [ "${1:-}" = "--add" ]; then
    for f in "${missing[@]}"; do
        case "$f" in
        *.cpp | *.h | *.cu) c='//' ;;
        *) c='#' ;;
        esac
        python3 - "$f" "$c" <<'PY'
import sys
path, c = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
header = f"{c} SPDX-FileCopyrightText: 2025-2026 The Napkin developers\n{c} SPDX-License-Identifier: GPL-3.0-or-later\n"
if text.startswith("#!"):
    first, _, rest = text.partition("\n")
    text = first + "\n" + header + rest
else:
    text = header + text
open(path, "w", encoding="utf-8").write(text)
PY
    done
    echo "spdx: added headers to ${#missing[@]} files"
    exit 0
fi
if ((${#missing[@]})); then
    printf 'spdx: no SPDX-License-Identifier in %s\n' "${missing[@]}" >&2
    exit 1
fi
echo "spdx: every source file has its SPDX header"
