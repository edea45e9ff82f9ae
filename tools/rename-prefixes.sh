#!/bin/sh
# rename-prefixes.sh: one-shot rename so that every public symbol carries
# its file's name (issue 12, "Names that explain themselves"). Run from the
# top of the tree after every branch is merged, before `make format`; then
# build and run the unit tests, and delete this script. Renames whole
# words only, in C sources, the test and tool scripts and the docs.
#   engine.c  eng_*  ENG_*   -> engine_*  ENGINE_*
#   datagen.c dgen_* DGEN_* struct dgen -> datagen_* DATAGEN_* struct datagen
#             (the dgen_bench program keeps its name)
#   verify.c  vfy_*  VFY_*   -> verify_*  VERIFY_*
#   fsmode.c  fs_*           -> fsmode_*  (functions only; FS_EXT4 & co. are cfg's)
#   health.c, whose exports are wear_* (wear.h) -> wear_health.c
set -eu
files=$(git ls-files '*.c' '*.h' '*.md' '*.py' '*.sh' '*.mk' '*.1' '*.5' '*.8' Makefile |
	grep -v '^tools/rename-prefixes.sh$')
rename() { # OLD NEW: whole identifiers
	grep -lw -- "$1" $files 2>/dev/null | xargs -r sed -i "s/\\b$1\\b/$2/g"
}
for s in bad create ctx destroy phase result run run_jobs sample; do rename eng_$s engine_$s; done
for s in BAD_MAX MAX_JOBS; do rename ENG_$s ENGINE_$s; done
rename 'struct dgen' 'struct datagen'
for s in block init rand random random_bytes unit; do rename dgen_$s datagen_$s; done
for s in LANES NO_CLONES PAGE RING; do rename DGEN_$s DATAGEN_$s; done
for s in check crc32c header reason reason_name stamp; do rename vfy_$s verify_$s; done
for s in BAD_CRC BAD_MAGIC BAD_OFFSET MAGIC OK SECTOR; do rename VFY_$s VERIFY_$s; done
for s in allocated mkfs_argv setup teardown; do rename fs_$s fsmode_$s; done
git mv common/health.c common/wear_health.c
sed -i '1s|^/\* health: |/* wear_health: |' common/wear_health.c
# Anything left with an old prefix is printed for a look (not an error).
git grep -nwE '(eng|dgen|vfy)_[a-z0-9_]+|(ENG|DGEN|VFY)_[A-Z0-9_]+' -- $files | grep -v dgen_bench || true
