# lib.sh - shell functions shared by the bench scripts (sourced, not run).

# sstkit_binary NAME BUILD: print the sstkit binary to use. $SSTKIT when set; else, when
# BUILD is 1, `cargo build --release` first; then CARGO_TARGET_DIR (or ./target)/release/sstkit.
# Exits 2 (naming the script NAME) when there is no binary.
sstkit_binary() {
  local name="$1" build="$2" root target bin
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if [[ -n "${SSTKIT:-}" ]]; then
    bin="$SSTKIT"
  else
    target="${CARGO_TARGET_DIR:-$root/target}"
    if [[ "$build" -eq 1 ]]; then
      echo "building: cargo build --release -p sstkit (target dir $target)" >&2
      (cd "$root" && cargo build --release -q -p sstkit) >&2
    fi
    bin="$target/release/sstkit"
  fi
  [[ -x "$bin" ]] || { echo "$name: no binary at $bin (build first)" >&2; exit 2; }
  echo "$bin"
}

# data_file NAME SSTABLE: print the Data.db of SSTABLE (a Data.db path, or a folder holding
# exactly one sstable). Exits 2 (naming the script NAME) otherwise.
data_file() {
  local name="$1" sst="$2" found
  if [[ -d "$sst" ]]; then
    mapfile -t found < <(find "$sst" -maxdepth 1 -name '*-Data.db' | sort)
    if [[ ${#found[@]} -ne 1 ]]; then
      echo "$name: expected one *-Data.db in $sst, found ${#found[@]} (run bench/make-bench-data.sh?)" >&2
      exit 2
    fi
    sst="${found[0]}"
  fi
  [[ -f "$sst" ]] || { echo "$name: no such file: $sst (run bench/make-bench-data.sh?)" >&2; exit 2; }
  echo "$sst"
}
