#!/usr/bin/env bash
# Builds the .deb from a configured build folder, checks its contents and metadata, installs it
# (dpkg -i, as root), runs the installed programs (self-test; the GUI's screenshot of
# Fashion-MNIST under Xvfb) and removes it. scripts/test.sh's package stage.
#   scripts/check-package.sh BUILD_DIR
set -euo pipefail
dir=${1:?usage: check-package.sh BUILD_DIR}
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
cmake --build "$dir" --target package
deb=$(ls -t "$dir"/nearscape_*_amd64.deb | head -1)
echo "package: $deb ($(du -h "$deb" | cut -f1))"

# The file list: both programs, the engine, the integration files.
list=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/nearscape ./usr/bin/nearscape-cli ./usr/lib/nearscape/libnearscape_engine.so \
         ./usr/share/applications/nearscape.desktop \
         ./usr/share/metainfo/io.nearscape.Nearscape.metainfo.xml \
         ./usr/share/mime/packages/nearscape.xml \
         ./usr/share/icons/hicolor/scalable/apps/nearscape.svg \
         ./usr/share/man/man1/nearscape.1.gz ./usr/share/man/man1/nearscape-cli.1.gz \
         ./usr/share/bash-completion/completions/nearscape-cli \
         ./usr/share/doc/nearscape/copyright; do
  grep -qxF "$f" <<<"$list" || { echo "package lacks $f" >&2; exit 1; }
done
if grep -q NEARSCAPE_WITH_CUDA:BOOL=ON "$dir/CMakeCache.txt"; then
  grep -qxF ./usr/lib/nearscape/libnearscape_cuda.so <<<"$list" || { echo "package lacks the CUDA plugin" >&2; exit 1; }
fi
python=false
if grep -q NEARSCAPE_BUILD_PYTHON:BOOL=ON "$dir/CMakeCache.txt"; then
  python=true
  for f in __init__.py __init__.pyi _show.py py.typed; do
    grep -qxF "./usr/lib/python3/dist-packages/nearscape/$f" <<<"$list" || { echo "package lacks the Python module's $f" >&2; exit 1; }
  done
  grep -qE '^\./usr/lib/python3/dist-packages/nearscape/_nearscape\.cpython-[0-9]+-.*\.so$' <<<"$list" ||
    { echo "package lacks the Python extension" >&2; exit 1; }
fi
# The module's check: imported from outside any build tree, a graph computed.
python_check='import numpy as np, nearscape as ns
ids, _ = ns.knn_graph(np.eye(5, dtype=np.float32), 2, backend="cpu")
assert ids.shape == (5, 2), ids.shape
print("python: nearscape", ns.__version__, "from", ns.__file__)'
dpkg-deb -f "$deb" Depends | grep -q libc6 || { echo "no Depends from dpkg-shlibdeps" >&2; exit 1; }
! dpkg-deb -f "$deb" Depends | grep -q -- '-dev' || { echo "Depends names a -dev package" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/root"
desktop-file-validate "$tmp/root/usr/share/applications/nearscape.desktop"
appstreamcli validate --no-net "$tmp/root/usr/share/metainfo/io.nearscape.Nearscape.metainfo.xml"
man -l "$tmp/root/usr/share/man/man1/nearscape-cli.1.gz" >/dev/null 2>"$tmp/man.err" &&
  ! grep -q . "$tmp/man.err" || { cat "$tmp/man.err" >&2; exit 1; }
# Relocatable: the unpacked programs run where they lie.
"$tmp/root/usr/bin/nearscape-cli" --version
if $python; then
  (cd / && PYTHONPATH="$tmp/root/usr/lib/python3/dist-packages" /usr/bin/python3 -c "$python_check")
fi
echo "lintian (errors fail; warnings listed):"
lintian --no-tag-display-limit "$deb" | tee "$tmp/lintian.txt" || true
! grep -q '^E:' "$tmp/lintian.txt" || { echo "lintian reports errors" >&2; exit 1; }

$sudo dpkg -i "$deb"
trap '$sudo dpkg -r nearscape >/dev/null || true; rm -rf "$tmp"' EXIT
/usr/bin/nearscape-cli self-test
if $python; then
  (cd / && env -u PYTHONPATH /usr/bin/python3 -c "$python_check")
fi
xvfb-run -a -s "-screen 0 1600x1000x24" timeout 900 /usr/bin/nearscape --screenshot "$tmp/shot.png"
[[ -s "$tmp/shot.png" ]] || { echo "no screenshot from /usr/bin/nearscape" >&2; exit 1; }
$sudo dpkg -r nearscape
trap 'rm -rf "$tmp"' EXIT
echo "package: installed, self-test passed, GUI screenshot taken, $($python && echo "Python module imported, ")removed"
