#!/bin/sh
# make size: text+data of libgemmi8.a by kernel set and by type (each kernel object
# counted once, under the set and type of its own row in the kernel lists; drivers and
# packing under "drivers"; a q8- file of the qu8 and qs8 lists, whose code serves both
# types, under "q8"), the total, and the budget check:
#   sh kernels/size.sh SIZE LIB "KERNEL_DIRS" ARCH "SETS" "TYPES" BUDGET_FILE
# BUDGET_FILE lines: ARCH SETS TYPES BYTES (SETS and TYPES as given to make, words
# joined by '+', or "all"); the total must not exceed the line of this build.
set -eu
size=$1 lib=$2 dirs=$3 arch=$4 sets=$5 types=$6 budget=$7
here=$(dirname "$0")
key_sets=$(echo "$sets" | tr ' ' '+') key_types=$(echo "$types" | tr ' ' '+')

owners=$(mktemp)
trap 'rm -f "$owners"' EXIT
sh "$here/list.sh" owners "$dirs" | awk '{ f = $1; sub(/^.*\//, "", f); sub(/\.c$/, ".o", f); print f, $2, $3 }' > "$owners"

$size "$lib" | awk -v owners="$owners" -v arch="$arch" -v sets="$key_sets" -v types="$key_types" \
    -v budget="$budget" '
  BEGIN {
    while ((getline line < owners) > 0) { split(line, w, " "); set[w[1]] = w[2]; type[w[1]] = w[3] }
    limit = ""
    while ((getline line < budget) > 0) {
      if (line ~ /^#/ || line ~ /^[ \t]*$/) continue
      split(line, w, " ")
      if (w[1] == arch && w[2] == sets && w[3] == types) limit = w[4]
    }
  }
  NR > 1 {
    obj = $6
    bytes = $1 + $2
    s = (obj in set) ? set[obj] : "drivers"
    t = (obj in type) ? type[obj] : "-"
    if (obj ~ /^q8-/ && (t == "qu8" || t == "qs8")) t = "q8"
    if (!(s in by_set)) sets_seen[++ns] = s
    if (!(t in by_type)) types_seen[++nt] = t
    by_set[s] += bytes; by_type[t] += bytes; cell[s, t] += bytes; total += bytes
  }
  END {
    printf "libgemmi8.a text+data by kernel set and type (%s, SETS=%s, TYPES=%s), bytes\n", arch, sets, types
    if ("q8" in by_type) print "(q8: the files that serve both 8-bit types, as many of them as the build holds)"
    printf "%-14s", "set"
    for (j = 1; j <= nt; j++) printf " %9s", types_seen[j]
    printf " %9s\n", "total"
    for (i = 1; i <= ns; i++) {
      printf "%-14s", sets_seen[i]
      for (j = 1; j <= nt; j++) printf " %9d", cell[sets_seen[i], types_seen[j]]
      printf " %9d\n", by_set[sets_seen[i]]
    }
    printf "%-14s", "total"
    for (j = 1; j <= nt; j++) printf " %9d", by_type[types_seen[j]]
    printf " %9d\n", total
    if (limit == "") {
      printf "no budget in %s for %s %s %s\n", budget, arch, sets, types
    } else if (total > limit) {
      printf "FAIL: %d bytes, over the budget of %d (%s)\n", total, limit, budget
      exit 1
    } else {
      printf "within the budget of %d bytes (%s): %d to spare\n", limit, budget, limit - total
    }
  }'
