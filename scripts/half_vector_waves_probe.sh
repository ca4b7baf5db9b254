#!/usr/bin/env bash
# Measurement only (bench/NOTES.md v68, "a lead from the probes"; run in session 67, v70): 2-byte
# plans whose rows take 8-byte vectors (V = 4) with only the output side off the 16-byte grid
# took realign window tiles only from 8 waves of 4 blocks per SM (realign_window_by_default), a
# threshold set in session 51 when those tiles had 128 rows. Since session 65 small grids give
# them 64 rows; did the threshold still hold? (No: session 67 moved it to 4 tiles per SM.)
# Columns: the library as is, realign windows forced with 64 rows, and with 128. Any module with
# both switches (main since session 65); run from the repository root on the device with the
# module in place.
# In brackets: output rows (the input's, 4 mod 8 elements), tiles of 128 rows per SM and waves
# of 4 blocks per SM on 132 SMs.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
# bf16 20004x768 (7.1, 1.8), fp16 4100x4096 (8.0, 2.0), fp16 12292x2048 (11.8, 2.9),
# bf16 32x1500x768 (17.5, 4.4), bf16 50252x768 (17.9, 4.5), bf16 64x1500x768 (34.9, 8.7; realign
# windows already), fp16 8x4100x4096 (64, 16)
S="bf16 20004x768,fp16 4100x4096,fp16 12292x2048,bf16 32x1500x768,bf16 50252x768,bf16 64x1500x768,fp16 8x4100x4096"
timeout ${PROBE_TIMEOUT:-150} python3 -m bench.ab_gpu_time --shapes "$S" --settings "" \
  "TORCH_TRANSPOSE_REALIGN_WINDOW=1 TORCH_TRANSPOSE_REALIGN_SMALL_TILES=1" \
  "TORCH_TRANSPOSE_REALIGN_WINDOW=1 TORCH_TRANSPOSE_REALIGN_SMALL_TILES=0" \
  --rounds 2 --out "$OUT/ab-half-vector-waves.md" 2>&1 | grep -v "Warning\|warn" | tail -10
