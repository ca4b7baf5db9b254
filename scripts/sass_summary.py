"""Summarises the SASS of our kernels: for each function whose name matches a pattern, its memory
instructions in program order, runs of the same opcode folded (LDGx18 STSx18 BAR ...). Shows
whether loads are all issued before their first use, and where the vector widths are.

usage: cuobjdump --dump-sass torch_transpose/_C*.so | python3 scripts/sass_summary.py PATTERN
"""
import re
import sys

MEMORY_OPS = ("LDG", "STG", "LDS", "STS", "BAR")


def summarise(text, pattern):
    for part in re.split(r"\n\s*Function : ", text)[1:]:
        name = part.split("\n", 1)[0].strip()
        if not re.search(pattern, name):
            continue
        ops = []
        for line in part.split("\n"):
            m = re.search(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
            if m and m.group(1).split(".")[0] in MEMORY_OPS:
                ops.append(m.group(1))
        folded, prev, count = [], None, 0
        for op in ops + [None]:
            if op == prev:
                count += 1
                continue
            if prev:
                folded.append(prev + (f"x{count}" if count > 1 else ""))
            prev, count = op, 1
        print(name)
        print("  " + " ".join(folded))


if __name__ == "__main__":
    summarise(sys.stdin.read(), sys.argv[1] if len(sys.argv) > 1 else "torch_transpose")
