#!/bin/sh
# Reads the kernel lists (kernels/<type>.inc) for the Makefile:
#   sh kernels/list.sh files "TYPES" "SETS" "DIRS"   the kernel sources of those lists'
#                                                   rows whose set is in SETS and whose
#                                                   file is in one of DIRS, one a line
#   sh kernels/list.sh sets "DIRS"                   every set with a file in DIRS
#   sh kernels/list.sh owners "DIRS"                 "file set type" for each source: the
#                                                   row of its own set (the file's
#                                                   suffix), else the first (make size)
# TYPES are list names (qu8, qs8, bin, dw, q4); SETS set names as in the rows (neondot_a510).
set -eu
here=$(dirname "$0")

# "set type file" for every kernel and helper row of the lists, in list order
rows() {
  for list in qu8 qs8 bin dw q4; do
    awk -v type="$list" '
      /^GEMMI8_(Q|B|DW|Q4)(UKERNEL|HELPER)\(/ {
        line = $0
        sub(/^[^(]*\(/, "", line)
        set = line; sub(/,.*/, "", set); gsub(/ /, "", set)
        file = $0; sub(/^.*, *"/, "", file); sub(/"\).*$/, "", file)
        print set, type, "kernels/" file
      }' "$here/$list.inc"
  done
}

in_dirs() { # file dirs
  for d in $2; do
    case "$1" in "$d"/*) return 0 ;; esac
  done
  return 1
}

case "${1:-}" in
  files)
    rows | while read -r set type file; do
      case " $2 " in *" $type "*) ;; *) continue ;; esac
      case " $3 " in *" $set "*) ;; *) continue ;; esac
      in_dirs "$file" "$4" && echo "$file"
    done | awk '!seen[$0]++'
    ;;
  sets)
    rows | while read -r set type file; do
      in_dirs "$file" "$2" && echo "$set"
    done | awk '!seen[$0]++'
    ;;
  owners)
    # the row whose set is the file's suffix (its instruction set), else the first
    rows | while read -r set type file; do
      in_dirs "$file" "$2" && echo "$file $set $type"
    done | awk '
      { isa = $1; sub(/\.c$/, "", isa); sub(/^.*-/, "", isa) }
      !($1 in owner) { order[++n] = $1; owner[$1] = $2 " " $3 }
      $2 == isa && !($1 in exact) { exact[$1] = $2 " " $3 }
      END { for (i = 1; i <= n; i++) print order[i], (order[i] in exact ? exact[order[i]] : owner[order[i]]) }'
    ;;
  *)
    echo "usage: sh kernels/list.sh files TYPES SETS DIRS | sets DIRS | owners DIRS" >&2
    exit 2
    ;;
esac
