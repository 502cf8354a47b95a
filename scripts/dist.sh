#!/usr/bin/env bash
# The steps of `make dist` (docs/release.md), one per call, so that make
# decides which artifact is stale. Every step reads dist/.build, where make
# built the binaries, and writes its artifact through a temporary name, so
# an interrupted step leaves no half-written file behind.
#
#   dist.sh stage            dist/.build/new/* -> dist/.build/*, only when changed; the version
#   dist.sh tarball OUT      vrlog, its man page and completions, under bin/ and share/
#   dist.sh deb OUT          the same under /usr, its dependencies from dpkg-shlibdeps
#   dist.sh static OUT       the static analyze
#   dist.sh wheel OUT        the Python reader, stamped with the version
#   dist.sh sums OUT FILE..  SHA256SUMS of the files
set -euo pipefail
cd "$(dirname "$0")/.."

DIST=dist
B=$DIST/.build
PYTHON=${PYTHON:-python3}
# The wheel's build backend, pinned, in a venv of its own (not pip's
# isolated build, which takes the newest setuptools at each build).
SETUPTOOLS=setuptools==80.9.0
MAINTAINER=${DIST_MAINTAINER:-vrlog developers <https://github.com/vrlog/vrlog>}
# Timestamps inside the tarball and the .deb: the commit's, so that a
# rebuild of one commit gives the same bytes.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}

die() {
	echo "dist: $*" >&2
	exit 1
}

# replace copies $1 to $2 unless they are equal, so that $2 keeps its mtime
# (and what make builds from it stays fresh) when nothing changed.
replace() {
	cmp -s "$1" "$2" || cp "$1" "$2"
}

# version maps what the binary's --version says to the version in the file
# names: v1.2.3 (a tag at HEAD) -> 1.2.3; devel 0123456789ab[-dirty] (any
# other commit) -> 0+devel.0123456789ab[.dirty], valid as a Debian version
# and as a Python (PEP 440) one.
version() {
	local out v
	out=$("$1" --version)
	v=${out#vrlog version }
	v=${v%%,*}
	case $v in
	v[0-9]*)
		v=${v#v}
		[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+(\+dirty)?$ ]] ||
			die "$1 --version says '$out': a release tag is vMAJOR.MINOR.PATCH (docs/release.md)"
		;;
	"devel "[0-9a-f]*)
		v=${v#devel }
		v=${v%% *}
		v=0+devel.${v/-dirty/.dirty}
		;;
	*)
		die "$1 --version says '$out': no revision to name a release by." \
			"Go stamps one only when it builds in a git clone (not a git worktree, whose .git is a file, nor an export)"
		;;
	esac
	echo "$v"
}

# glibc is the newest GLIBC symbol version the binary $1 imports: the oldest
# glibc it runs on.
glibc() {
	objdump -T "$1" | awk '/\*UND\*/' | grep -o 'GLIBC_[0-9][0-9.]*' | sort -Vu | tail -1 | cut -d_ -f2
}

# needed lists the shared libraries the binary $1 links.
needed() {
	readelf -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | sed 's/ $//'
}

stage() {
	[ "$(uname -m)" = x86_64 ] ||
		die "make dist builds linux/amd64 releases; this machine is $(uname -m) (docs/release.md: how arm64 would be built)"
	replace "$B/new/vrlog" "$B/vrlog"
	replace "$B/new/analyze" "$B/analyze"
	local v
	v=$(version "$B/vrlog")
	if [ "$(cat "$B/version" 2>/dev/null)" != "$v" ]; then
		# Another version's artifacts are not this release's.
		find "$DIST" -maxdepth 1 -type f -delete
		echo "$v" >"$B/version"
	fi
}

# layout installs vrlog, its man page and its completions under the prefix
# $1 (bin/, share/), zsh's in $1/$2.
layout() {
	local p=$1 zsh=$2
	install -Dm755 "$B/vrlog" "$p/bin/vrlog"
	mkdir -p "$p/share/man/man1" "$p/share/bash-completion/completions" "$p/$zsh" "$p/share/fish/vendor_completions.d"
	"$B/vrlog" man | gzip -9n >"$p/share/man/man1/vrlog.1.gz"
	"$B/vrlog" completion bash >"$p/share/bash-completion/completions/vrlog"
	"$B/vrlog" completion zsh >"$p/$zsh/_vrlog"
	"$B/vrlog" completion fish >"$p/share/fish/vendor_completions.d/vrlog.fish"
}

tarball() {
	local out=$1 v name d
	v=$(cat "$B/version")
	name=vrlog_${v}_linux_amd64
	d=$B/tar/$name
	rm -rf "$B/tar"
	layout "$d" share/zsh/site-functions
	install -Dm644 LICENSE "$d/share/doc/vrlog/LICENSE"
	cat >"$d/share/doc/vrlog/INSTALL" <<-EOF
		vrlog $v for Linux on x86-64 (amd64)

		Needs Linux with glibc $(glibc "$B/vrlog") or newer (the newest GLIBC symbol version
		vrlog imports). It links $(needed "$B/vrlog")
		and nothing else: the zenoh and iceoryx2 transports are built in.

		Install under /usr/local (or ~/.local, with ~/.local/bin on PATH):

		    sudo tar -xzf $name.tar.gz -C /usr/local --strip-components=1

		    bin/vrlog                                   every verb: vrlog --help
		    share/man/man1/vrlog.1.gz                   man vrlog
		    share/bash-completion/completions/vrlog     bash (with the bash-completion package)
		    share/zsh/site-functions/_vrlog             zsh
		    share/fish/vendor_completions.d/vrlog.fish  fish
	EOF
	tar --sort=name --owner=0 --group=0 --numeric-owner --mode=u+rwX,go+rX,go-w \
		--mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime -C "$B/tar" -cf - "$name" | gzip -n >"$out.tmp"
	mv "$out.tmp" "$out"
}

deb() {
	local out=$1 v src p deps
	v=$(cat "$B/version")
	src=$B/deb
	p=$src/debian/vrlog
	rm -rf "$src"
	layout "$p/usr" share/zsh/vendor-completions
	install -Dm644 /dev/stdin "$p/usr/share/doc/vrlog/copyright" <<-EOF
		Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
		Upstream-Name: vrlog
		Source: https://github.com/vrlog/vrlog

		Files: *
		License: Apache-2.0
		 On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0.
	EOF
	# dpkg-shlibdeps reads the package's libraries' symbols files: the
	# oldest libc6 and libgcc-s1 that have every symbol version vrlog uses
	# (it finds the package's root by its DEBIAN directory).
	mkdir -p "$p/DEBIAN"
	printf 'Source: vrlog\n\nPackage: vrlog\nArchitecture: amd64\n' >"$src/debian/control"
	deps=$(cd "$src" && dpkg-shlibdeps -O debian/vrlog/usr/bin/vrlog)
	deps=${deps#shlibs:Depends=}
	[ -n "$deps" ] || die "dpkg-shlibdeps found no dependencies of vrlog"
	cat >"$p/DEBIAN/control" <<-EOF
		Package: vrlog
		Version: $v
		Architecture: amd64
		Maintainer: $MAINTAINER
		Installed-Size: $(du -sk "$p/usr" | cut -f1)
		Depends: $deps
		Section: utils
		Priority: optional
		Homepage: https://github.com/vrlog/vrlog
		Description: record, replay and audit robot-simulator streams
		 vrlog records a simulator's zenoh states and iceoryx2 camera frames into
		 one chunked, indexed, crash-safe log on one clock, replays it at the
		 original pacing into a controller under test, and audits its timing
		 (sequence skips, publisher restarts, outages, lag) as a CI gate.
		 The zenoh and iceoryx2 transports are linked in.
	EOF
	# gzip, not xz: 8 s against 19 s for a 24 MB package (17 MB with xz)
	# here, and every dpkg reads it.
	dpkg-deb --root-owner-group -Zgzip --build "$p" "$out.tmp" >/dev/null
	mv "$out.tmp" "$out"
}

static() {
	local out=$1
	if readelf -lW "$B/analyze" | grep -q INTERP; then
		die "$B/analyze is dynamically linked: it must build with CGO_ENABLED=0"
	fi
	cp "$B/analyze" "$out.tmp"
	mv "$out.tmp" "$out"
}

wheel() {
	local out=$1 v venv src
	v=$(cat "$B/version")
	venv=$B/pybuild
	if [ "$(cat "$venv/pin" 2>/dev/null)" != "$SETUPTOOLS" ]; then
		rm -rf "$venv"
		"$PYTHON" -m venv "$venv"
		"$venv/bin/pip" install -q "$SETUPTOOLS"
		echo "$SETUPTOOLS" >"$venv/pin"
	fi
	src=$B/python
	rm -rf "$src" "$B/wheel"
	mkdir -p "$src/vrlog"
	cp python/pyproject.toml python/README.md "$src/"
	cp python/vrlog/*.py "$src/vrlog/"
	# The version is the release's: a tag's must already be pyproject's (the
	# release commit sets it); any other build is stamped with its revision.
	if [[ $v != *devel* ]] && ! grep -qx "version = \"${v%+dirty}\"" "$src/pyproject.toml"; then
		die "python/pyproject.toml's version is not ${v%+dirty}: the release commit sets it (docs/release.md)"
	fi
	sed -i "s/^version = \".*\"$/version = \"$v\"/" "$src/pyproject.toml"
	grep -qx "version = \"$v\"" "$src/pyproject.toml" || die "python/pyproject.toml has no version line to stamp"
	"$venv/bin/pip" wheel -q --no-deps --no-build-isolation -w "$B/wheel" "$src"
	[ -f "$B/wheel/$(basename "$out")" ] || die "pip built $(ls "$B/wheel"), not $(basename "$out")"
	mv "$B/wheel/$(basename "$out")" "$out"
}

sums() {
	local out=$1
	shift
	(cd "$(dirname "$out")" && sha256sum "${@##*/}") >"$out.tmp"
	mv "$out.tmp" "$out"
}

step=${1:-}
shift || true
case $step in
stage | tarball | deb | static | wheel | sums) "$step" "$@" ;;
*) die "usage: dist.sh stage|tarball OUT|deb OUT|static OUT|wheel OUT|sums OUT FILE..." ;;
esac
