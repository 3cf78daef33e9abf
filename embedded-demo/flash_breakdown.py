#!/usr/bin/env python3
"""What fills the firmware's flash: text + rodata by crate, from `nm -S -C` symbol sizes.

Usage: flash_breakdown.py [--total] ELF [LOG]. `--total` prints the first line only. With the firmware's log (target/embedded/TARGET.log), the
bundled modules' bytes (printed as module_bytes=) are shown as their own line; they sit in
rodata without a sized symbol. Bytes no symbol accounts for (string constants, tables without
symbols, padding) are shown as `unattributed`.
"""
import collections
import re
import subprocess
import sys

FLASH_SECTIONS = re.compile(r"^\.(vector_table|text|rodata|init|trap|srodata)")


def flash_bytes(elf):
    """Sum of the flash sections' sizes (`size -A`)."""
    out = subprocess.run(["size", "-A", elf], check=True, capture_output=True, text=True).stdout
    total = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and FLASH_SECTIONS.match(parts[0]):
            total += int(parts[1])
    return total


def crate_of(name):
    """The crate a demangled symbol belongs to (for `<A as B>::f`, A's crate, else B's)."""
    if name.startswith("<"):
        depth, i = 0, 0
        for i, c in enumerate(name):
            depth += c == "<"
            depth -= c == ">"
            if depth == 0:
                break
        inner = name[1:i]
        self_type, _, trait = inner.partition(" as ")
        self_type = self_type.lstrip("&*").removeprefix("mut ").removeprefix("const ")
        for candidate in (self_type, trait):
            head = candidate.lstrip("&*<[(").split("::")[0]
            if "::" in candidate and head:
                return head
        return "(generic)"
    return name.split("::")[0] if "::" in name else "(no crate: " + name[:40] + ")"


def main():
    args = sys.argv[1:]
    only_total = args[:1] == ["--total"]
    args = args[1:] if only_total else args
    elf = args[0]
    log = args[1] if len(args) > 1 else None
    nm = subprocess.run(["nm", "-S", "-C", "--size-sort", elf], check=True, capture_output=True, text=True).stdout
    by_crate = collections.Counter()
    for line in nm.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTrR":
            name = parts[3]
            crate = "(anonymous constants)" if name.startswith(".L") else crate_of(name)
            by_crate[crate] += int(parts[1], 16)
    modules = 0
    if log:
        with open(log, encoding="utf-8") as f:
            modules = sum(int(m) for m in re.findall(r"module_bytes=(\d+)", f.read()))
    total = flash_bytes(elf)
    print(f"flash (text+rodata) {total} bytes = {total / 1024:.1f} KiB")
    if only_total:
        return
    rows = by_crate.most_common()
    small = sum(size for _, size in rows[12:])
    for crate, size in rows[:12]:
        print(f"  {crate:<28} {size:>8}  {100 * size / total:5.1f}%")
    print(f"  {'(other crates)':<28} {small:>8}  {100 * small / total:5.1f}%")
    rest = total - sum(by_crate.values())
    print(f"  {'unattributed':<28} {rest:>8}  {100 * rest / total:5.1f}%")
    if modules:
        print(f"  of which bundled plugin modules {modules} bytes ({100 * modules / total:.1f}%)")


if __name__ == "__main__":
    main()
