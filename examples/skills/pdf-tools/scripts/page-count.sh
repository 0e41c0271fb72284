#!/bin/sh
# Prints "<pages>  <file>" for every PDF in the given folder (default: .).
set -eu
for f in "${1:-.}"/*.pdf; do
  [ -e "$f" ] || continue
  printf '%s\t%s\n' "$(qpdf --show-npages "$f")" "$f"
done
