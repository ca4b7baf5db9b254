# Sourced, not run: the switches of gpu_check.sh's older-paths rerun (the CUDA cases of
# test_transpose.py and test_permute.py once more with them set), in the array older_paths, for
# gpu_check.sh and for any GPU call that reruns some of those cases the same way.
#
# Transposes of up to 32768 elements take the direct kernel (csrc/cuda/direct_transpose.cuh),
# and most test cases are that small: their CUDA cases run once more with it off, so the tile,
# narrow and box kernels still meet every small shape on the GPU; and with narrow warp tiles
# shared by warp pairs for every N (the library pairs them from N = 7), so both narrow
# variants meet every narrow size; and with short rows of whole vectors on the group kernel and
# every grid capped (the library sends those rows to the vector row kernel and gives every
# kernel one block per item), so the paths the library no longer takes by default keep GPU
# coverage; and with 4 tile streams for every square tile plan (the library gives them only to
# 8-byte tiles of 1 GiB or more) and 16-byte box stores with carries where d0 is whole 8-byte
# vectors only (the library stores 8 bytes there); and with compact tiles for every plan of
# whole compact tiles and narrow block tiles in both directions (the library gives them to
# 2-byte plans whose usual tiles have edges, and to dense outputs only); and with the interleave
# kernel off, so the narrow kernel still meets the packed C it takes (interleave_max_c) against
# whole-vector planes; and with the copy engine's tiles off, so 1-byte vector plans still meet
# the square tile kernels; and with 4-byte rows of 8-byte vectors on the square tile kernel
# (the library gives them window tiles); and with 1- and 2-byte plans without 16-byte vectors on
# the square tile kernel too (the library gives most of them realign window tiles); and with
# whole-tile plans on the square tile kernel (the library gives them lean tiles); and with 16-line
# narrow plans, short rows of 2^k vectors and window tile plans off their lean kernels, and with
# gather tiles off (the box kernel then meets the 5-D layouts they take, and window, realign
# window and square tiles the wide ones of output rows that are not whole tiles), all with plain loads
# rather than L2 evict_last ones.
older_paths=(TORCH_TRANSPOSE_KERNELS=direct=0,narrow_pairs=1,vector_rows=0,one_block_per_item=0,tile_streams=4,box_half_stores=0,compact_tile=1,narrow_block=1,interleave=0,tma_tile=0,window_half_vectors=0,realign_window=0,lean_tile=0,lean_narrow=0,lean_rows=0,lean_window=0,gather_tile=0,l2_evict_last=0)
