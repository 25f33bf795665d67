#!/usr/bin/env bash
# Build redrive_<version>_<arch>.deb from this tree, without debhelper:
#   meson (prefix /usr, Debian's hardening flags) -> meson install --destdir STAGE
#   -> docs (copyright, gzip -9n man page and changelog) -> DEBIAN/control from
#   debian/control + debian/changelog (dpkg-gencontrol), Depends from the linked and the
#   lazily loaded libraries (dpkg-shlibdeps) -> dpkg-deb.
# Env: PKG_BUILD_DIR (default build-deb, reused when present), PKG_OUT_DIR (default: here).
# Prints the path of the .deb last.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${PKG_BUILD_DIR:-build-deb}
OUT=${PKG_OUT_DIR:-$ROOT}
umask 022

die() { echo "package: $*" >&2; exit 1; }
for t in meson ninja dpkg-deb dpkg-shlibdeps dpkg-gencontrol dpkg-parsechangelog dpkg-buildflags cc; do
  command -v "$t" >/dev/null || die "$t not found (bash scripts/setup.sh installs it)"
done

# The package's version is debian/changelog's; it must be the one meson.build declares.
version=$(dpkg-parsechangelog -S Version)
meson_version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" meson.build)
[ "$version" = "$meson_version" ] ||
  die "debian/changelog:1: version $version, but meson.build says $meson_version"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

if [ ! -f "$BUILD/build.ninja" ]; then
  # Debian's flags (hardening: fortify, stack protector, relro, now); buildtype plain so
  # they decide the optimisation, as a Debian build does.
  eval "$(dpkg-buildflags --export=sh)"
  meson setup "$BUILD" --prefix=/usr --buildtype=plain -Dtest_hooks=false \
    -Dzsh_completions_dir=/usr/share/zsh/vendor-completions >/dev/null
fi
# never the REDRIVE_* test hooks in a package, whatever a reused build dir was set up with
meson configure "$BUILD" -Dtest_hooks=false >/dev/null
ninja -C "$BUILD" src/cli/redrive >/dev/null     # only what is installed
"$BUILD/src/cli/redrive" --version | grep -qx 'test hooks: off' ||
  die "$BUILD/src/cli/redrive was built with the test hooks (-Dtest_hooks=true)"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
STAGE=$TMP/stage
meson install -C "$BUILD" --destdir "$STAGE" --no-rebuild --strip --quiet
[ -x "$STAGE/usr/bin/redrive" ] || die "meson install put no /usr/bin/redrive in the stage"
DOC=$STAGE/usr/share/doc/redrive
install -d "$DOC"
install -m 644 debian/copyright "$DOC/copyright"
gzip -9n -c debian/changelog >"$DOC/changelog.gz"        # a native package: changelog.gz
gzip -9n "$STAGE/usr/share/man/man1/redrive.1"
find "$STAGE" -type d -exec chmod 755 {} +
find "$STAGE" -type f -exec chmod 644 {} +
chmod 755 "$STAGE/usr/bin/redrive"

# Depends. The binary links some libraries and dlopens others on first use
# (src/io/lazylib.c): dpkg-shlibdeps sees only what is linked, so a stub linked against
# exactly the sonames lazylib.c loads stands for the others.
mapfile -t lazy < <(sed -n 's/^static lazy_lib [a-z_]* = {"\(lib[^"]*\.so[^"]*\)", NULL};$/\1/p' src/io/lazylib.c)
[ ${#lazy[@]} -gt 0 ] || die "src/io/lazylib.c: no lazily loaded sonames found"
echo 'int main(void) { return 0; }' >"$TMP/stub.c"
cc -o "$TMP/lazy-libs" "$TMP/stub.c" -Wl,--no-as-needed "${lazy[@]/#/-l:}"
dpkg-shlibdeps -T"$TMP/substvars" -e"$STAGE/usr/bin/redrive" -e"$TMP/lazy-libs" 2>"$TMP/shlibdeps.err" ||
  { cat "$TMP/shlibdeps.err" >&2; die "dpkg-shlibdeps failed"; }

install -d -m 755 "$STAGE/DEBIAN"
dpkg-gencontrol -predrive -P"$STAGE" -T"$TMP/substvars" -f"$TMP/files"
(cd "$STAGE" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$STAGE/DEBIAN/md5sums"
chmod 644 "$STAGE/DEBIAN/control" "$STAGE/DEBIAN/md5sums"

mkdir -p "$OUT"
deb=$OUT/redrive_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$deb" >/dev/null
echo "$deb"
