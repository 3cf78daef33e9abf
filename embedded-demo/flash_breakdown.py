#!/usr/bin/env python3
"""What fills the firmware's flash: text + rodata by crate, from `nm -S -C` symbol sizes.

Usage: flash_breakdown.py [--total] ELF [LOG] | --floor FLOOR_ELF ELF. `--total` prints the first line only.
`--floor` compares the demo with its floor (plain wasmi, the same plugins: src/floor/main.rs): both
totals, Contour's share (the difference) and the crates that differ most. With the firmware's log (target/embedded/TARGET.log), the
bundled modules' bytes (printed as module_bytes=) are shown as their own line; they sit in
rodata without a sized symbol. Bytes no symbol accounts for (string constants, tables without
symbols, padding) are shown as `unattributed`.
"""
import collections
import re
import subprocess
import sys

# .eh_frame: unwind tables sit in flash too (none are emitted with the firmware's flags).
FLASH_SECTIONS = re.compile(r"^\.(vector_table|text|rodata|init|trap|srodata|eh_frame)")


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


def by_crate_of(elf):
    """Sized text and rodata symbols' bytes by crate (`nm -S -C`)."""
    nm = subprocess.run(["nm", "-S", "-C", "--size-sort", elf], check=True, capture_output=True, text=True).stdout
    by_crate = collections.Counter()
    for line in nm.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTrR":
            name = parts[3]
            crate = "(anonymous constants)" if name.startswith(".L") else crate_of(name)
            by_crate[crate] += int(parts[1], 16)
    return by_crate


def floor(floor_elf, elf):
    """The demo against its floor: Contour's share and where it is."""
    base, total = flash_bytes(floor_elf), flash_bytes(elf)
    print(f"floor (plain wasmi, same plugins) {base} bytes = {base / 1024:.1f} KiB")
    print(f"demo {total} bytes; Contour's share over the floor {total - base} bytes = {(total - base) / 1024:.1f} KiB")
    a, b = by_crate_of(floor_elf), by_crate_of(elf)
    names = {n for n in a} | {n for n in b}
    demo_crates = ("contour_embedded_demo", "contour_embedded_floor")
    diffs = [(b[n] - a[n], n) for n in names if n not in demo_crates]
    diffs.append((b["contour_embedded_demo"] - a["contour_embedded_floor"], "the firmware's own code (demo - floor)"))
    rest = (total - sum(b.values())) - (base - sum(a.values()))
    diffs.append((rest, "unattributed (constants, traces, strings)"))
    diffs.sort(reverse=True)
    for diff, name in diffs[:10]:
        print(f"  {name:<42} {diff:>+8}")
    other = sum(d for d, _ in diffs[10:])
    print(f"  {'(the rest)':<42} {other:>+8}")


def main():
    args = sys.argv[1:]
    if args[:1] == ["--floor"]:
        floor(args[1], args[2])
        return
    only_total = args[:1] == ["--total"]
    args = args[1:] if only_total else args
    elf = args[0]
    log = args[1] if len(args) > 1 else None
    by_crate = by_crate_of(elf)
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
