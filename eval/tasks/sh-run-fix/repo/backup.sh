#!/usr/bin/env bash
# Copies every .txt file of notes/ into backup/.
set -euo pipefail
mkdir -p backup
for file in notes/*.txt; do
  cp "$file" backup/
done
echo "backed up $(ls backup | wc -l) files"
