"""Digests of a build's SASS, kernel by kernel: proof that a change left the
machine code alone (a comment, a rename of a file or a host function).

    cuobjdump -sass redux/_C*.so > a.txt ; ... ; cuobjdump -sass redux/_C*.so > b.txt
    python scripts/sass_digest.py a.txt            # one digest over every kernel
    python scripts/sass_digest.py a.txt b.txt      # the kernels that differ, if any

Kernels are keyed by their (mangled) name and architecture; the source file
names cuobjdump prints are left out, so moving a kernel between files
changes nothing.
"""
import hashlib
import re
import sys

SKIP = re.compile(r"^(Fatbin |identifier|arch =|code version|host =|compile_size|\s*code for sm_)")


def kernels(path):
    """{(name, arch): SASS text} of a cuobjdump -sass listing."""
    out, arch, name, lines = {}, "", None, []

    def close():
        if name is not None:
            out[(name, arch)] = out.get((name, arch), "") + "".join(lines)

    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*code for (sm_\w+)", line)
            if m:
                arch = m.group(1)
            m = re.match(r"\s*Function : (\S+)", line)
            if m:
                close()
                name, lines = m.group(1), []
            elif line.startswith("Fatbin "):
                close()
                name, lines = None, []
            elif name is not None and line.strip() and not SKIP.match(line):
                lines.append(line)
    close()
    return out


def digest(ks):
    h = hashlib.sha256()
    for key in sorted(ks):
        h.update(f"{key[0]} {key[1]}\n".encode())
        h.update(ks[key].encode())
    return h.hexdigest()[:16]


def main(argv):
    if len(argv) not in (1, 2):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    a = kernels(argv[0])
    print(f"{argv[0]}: {len(a)} kernels, digest {digest(a)}")
    if len(argv) == 1:
        return 0
    b = kernels(argv[1])
    print(f"{argv[1]}: {len(b)} kernels, digest {digest(b)}")
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    differ = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    for what, keys in (("only in the first", only_a), ("only in the second", only_b), ("differ", differ)):
        for k in keys:
            print(f"{what}: {k[0]} ({k[1]})")
    same = not (only_a or only_b or differ)
    print("identical SASS" if same else "SASS differs")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
