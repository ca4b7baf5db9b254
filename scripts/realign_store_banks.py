"""Shared-memory wavefronts per load of the realign window kernel's store gather
(csrc/cuda/realign_window_tile_transpose.cuh), by a model of the banks: for each warp and each
element k of its vectors, the 4-byte word every lane reads; a load takes as many wavefronts as
the most distinct words that meet in one bank. Compares the store lanes of 16 vectors per output
row (`t % 16`, two rows per warp) with byte_store_lane's 8 vectors of 4 rows (bench/NOTES.md v49),
for both element widths and three patterns of row shifts, and for 2-byte tiles half_store_lane's
16 vectors of two rows 2 apart (v50).

    python3 scripts/realign_store_banks.py
"""
import random

THREADS, TILE_A = 256, 128


def sixteen_per_row(t, width):
    return t % 16, t // 16


def four_rows_a_word_apart(t, width):
    """byte_store_lane for 1-byte tiles; the same idea for 2-byte ones (rows 2 apart)."""
    word = 4 // width  # elements per 4-byte word
    lane, warp = t % 32, t // 32
    rows = warp // 2
    return 8 * (warp % 2) + lane % 8, (rows // word) * (4 * word) + rows % word + word * (lane // 8)


def rows_two_apart(t, width):
    """half_store_lane (2-byte tiles, v50): 16 vectors per row, a warp's two rows 2 apart."""
    warp, h = t // 32, t // 16 % 2
    return t % 16, 4 * (warp // 2) + warp % 2 + 2 * h


def wavefronts(width, lanes, shift_of_row):
    vector = 16 // width                  # kV: elements per 16-byte chunk
    chunks = TILE_A * width // 16         # kChunks: chunks per tile row
    sector = 32 // width                  # kShift: the window's grid
    key = lambda j: (j // vector) % chunks
    total = count = 0
    for warp in range(THREADS // 32):
        for k in range(vector):
            banks = {}
            for lane in range(32):
                sx, r = lanes(32 * warp + lane, width)
                j = sector + sx * vector - shift_of_row(r) % sector + k  # tile row of element k
                element = (j * chunks + ((r // vector) ^ key(j))) * vector + r % vector
                word = element * width // 4
                banks.setdefault(word % 32, set()).add(word)
            total += max(len(words) for words in banks.values())
            count += 1
    return total / count


def main():
    random.seed(0)
    shifts = {"GPT-2's rows (shift + 1 per row)": lambda r: r * 50257,
              "random shifts": lambda r, s=[random.randrange(64) for _ in range(TILE_A)]: s[r],
              "unshifted": lambda r: 0}
    for width in (1, 2):
        for name, shift in shifts.items():
            old = wavefronts(width, sixteen_per_row, shift)
            new = wavefronts(width, four_rows_a_word_apart, shift)
            line = f"{width}-byte, {name:34s} 16 lanes per row {old:.2f}, 4 rows x 8 vectors {new:.2f}"
            if width == 2:
                line += f", rows 2 apart {wavefronts(width, rows_two_apart, shift):.2f}"
            print(line)


if __name__ == "__main__":
    main()
