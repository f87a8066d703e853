#!/usr/bin/env python3
"""check_readme_layout.py — checks the README's layout table against the repository
(run first by `make test-readme`): every top-level folder that
git tracks has a row, and every row names a folder that exists. Prints what
disagrees and exits 1, or prints one line of counts and exits 0."""
import os
import re
import subprocess
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
text = open("README.md").read()
m = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", text, re.M | re.S)
if not m:
    sys.exit("check_readme_layout: README.md has no \"## Layout\" section")
rows = set(re.findall(r"^\| `([^`/]+)/` \|", m.group(1), re.M))
files = subprocess.run(["git", "ls-files"], stdout=subprocess.PIPE, check=True,
                       universal_newlines=True).stdout.split("\n")
folders = {f.split("/")[0] for f in files if "/" in f}
bad = ["README.md layout: no row for the folder %s/" % d for d in sorted(folders - rows)]
bad += ["README.md layout: a row for %s/, which git does not track" % d
        for d in sorted(rows - folders)]
for line in bad:
    print(line)
if bad:
    sys.exit(1)
print("README.md layout: %d folders, every one in the table" % len(folders))
