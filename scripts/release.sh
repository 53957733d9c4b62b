#!/usr/bin/env bash
# Builds the kubectl-quota release archives and writes their sums into the krew manifest.
#
#   scripts/release.sh TAG [--targets T[,T...]] [--dry-run] [--no-build]
#                          [--dist DIR] [--manifest FILE]
#
# TAG is v<version of Cargo.toml>, e.g. v0.1.0. For every target it can build here, the
# script runs `cargo build --profile dist --locked --target T` and packs the binary, LICENSE and,
# when it exists, completions/kubectl_complete-quota into DIR (default dist/):
#   kubectl-quota-TAG-T.tar.gz   (Linux, macOS)      kubectl-quota-TAG-T.zip   (Windows)
# plus ARCHIVE.sha256 next to each. Targets it cannot build here are skipped, with the reason.
#
# Then it rewrites FILE (default krew-manifest.yaml): spec.version = TAG and, per platform,
# the release download uri and the sha256 of the archive in DIR. A platform whose archive is
# not in DIR (skipped here: build it on a machine that can, copy it into DIR and run again
# with --no-build) gets the "unreleased" placeholder sum of 64 zeros.
#
#   --targets   targets to build, comma- or space-separated, or "host". Default: the six
#               release targets, {x86_64,aarch64}-unknown-linux-musl, -apple-darwin and
#               -pc-windows-msvc. x86_64-/aarch64-unknown-linux-gnu are accepted as glibc
#               stand-ins for linux/amd64 and linux/arm64, for local testing.
#   --dry-run   print the plan (what would be built or skipped, and every archive name and
#               uri) and change nothing.
#   --no-build  build nothing; only rewrite the manifest from the archives already in DIR.
#   --binary F  pack F as the binary of the one target named by --targets instead of building
#               it (the krew install test packs the binary its test build made).
#
# The script never tags, pushes or uploads. Publishing: upload DIR's files to the GitHub
# release TAG, then submit the manifest (with no placeholder left) to krew-index as
# plugins/quota.yaml.
set -euo pipefail

readonly BIN=kubectl-quota
readonly COMPLETION=kubectl_complete-quota
readonly COMPLETION_SRC=completions/$COMPLETION
readonly UNRELEASED_SHA=0000000000000000000000000000000000000000000000000000000000000000
# One per krew platform, in the manifest's order.
readonly RELEASE_TARGETS=(
  x86_64-unknown-linux-musl
  aarch64-unknown-linux-musl
  x86_64-apple-darwin
  aarch64-apple-darwin
  x86_64-pc-windows-msvc
  aarch64-pc-windows-msvc
)
readonly STAND_IN_TARGETS=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu)

die() { echo "release.sh: $*" >&2; exit 2; }
((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))) ||
  die "needs bash 4.4 or newer (on macOS: brew install bash)"
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

# --- what a target is ---------------------------------------------------------------------

platform_of() { # target -> os/arch (krew's selector values)
  local os arch
  case $1 in
    *-linux-*) os=linux ;;
    *-apple-darwin) os=darwin ;;
    *-windows-*) os=windows ;;
    *) die "no krew platform for target $1" ;;
  esac
  case $1 in
    x86_64-*) arch=amd64 ;;
    aarch64-*) arch=arm64 ;;
    *) die "no krew platform for target $1" ;;
  esac
  echo "$os/$arch"
}

words() { tr '\n' ' ' | sed 's/ *$//'; }
bin_file() { [[ $1 == *-windows-* ]] && echo "$BIN.exe" || echo "$BIN"; }
archive_of() { # tag target
  local ext=tar.gz
  [[ $2 == *-windows-* ]] && ext=zip
  echo "$BIN-$1-$2.$ext"
}
uri_of() { echo "$homepage/releases/download/$1/$(archive_of "$1" "$2")"; }

# Files packed into every archive, by their name inside it.
archive_members() {
  bin_file "$1"
  echo LICENSE
  [[ -f $COMPLETION_SRC ]] && echo "$COMPLETION"
  return 0
}

# --- what this machine can build ----------------------------------------------------------

host_target() { rustc -vV | sed -n 's/^host: //p'; }

installed_targets() {
  if command -v rustup >/dev/null; then
    rustup target list --installed
  else
    host_target # without rustup, only the host's standard library is known to be there
  fi
}

linker_var() { local t=${1//-/_}; echo "CARGO_TARGET_${t^^}_LINKER"; }

# Prints why target $1 cannot be built here, or nothing when it can.
skip_reason() {
  local t=$1 var
  var=$(linker_var "$t")
  [[ $t == "$host" ]] && return 0
  if [[ -z ${!var:-} ]]; then # unless the user named a linker for it
    case $t in
      *-apple-darwin)
        if [[ $host != *-apple-darwin ]]; then
          echo "linking for macOS needs Apple's SDK and linker: build on macOS (or set $var)"
          return 0
        fi ;;
      *-windows-msvc)
        if [[ $host != *-windows-msvc ]]; then
          echo "linking for Windows needs MSVC link.exe and the Windows SDK: build on Windows (or set $var)"
          return 0
        fi ;;
      *-linux-*)
        if [[ $host != *-linux-* ]]; then
          echo "linking for Linux needs a Linux toolchain: build on Linux (or set $var)"
          return 0
        elif [[ ${t%%-*} != "${host%%-*}" ]]; then
          echo "cross-compiling to ${t%%-*} needs a C compiler and linker for ${t%%-*} (ring has C code): build on ${t%%-*} Linux, or set $var and CC_${t//-/_}"
          return 0
        fi ;;
    esac
  fi
  if ! grep -qx "$t" <<<"$installed"; then
    echo "the Rust standard library for $t is not installed (rustup target add $t)"
  fi
  return 0
}

# --- building and packing -----------------------------------------------------------------

sha256_of() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

make_zip() { # out dir members... (run inside dir)
  local out=$1 dir=$2
  shift 2
  if command -v zip >/dev/null; then
    (cd "$dir" && zip -q -X "$out" "$@")
  elif command -v 7z >/dev/null; then
    (cd "$dir" && 7z a -tzip -bso0 "$out" "$@")
  elif command -v python3 >/dev/null; then
    (cd "$dir" && python3 -m zipfile -c "$out" "$@")
  else
    die "no zip, 7z or python3 to make $out"
  fi
}

make_tar_gz() { # out dir members...
  local out=$1 dir=$2 owner=()
  shift 2
  tar --version 2>/dev/null | grep -q 'GNU tar' && owner=(--owner=0 --group=0 --numeric-owner)
  tar -C "$dir" "${owner[@]}" -czf "$out" "$@"
}

build_and_pack() { # tag target
  local tag=$1 t=$2 bin stage archive members
  bin=$(bin_file "$t")
  archive=$dist/$(archive_of "$tag" "$t")
  stage=$(mktemp -d)
  if [[ -n $binary ]]; then
    echo "==> $t: packing $binary (not built here)"
    cp "$binary" "$stage/$bin"
  else
    echo "==> $t: cargo build --profile dist --locked --target $t"
    cargo build --profile dist --locked --target "$t"
    cp "${CARGO_TARGET_DIR:-target}/$t/dist/$bin" "$stage/$bin"
  fi
  cp LICENSE "$stage/LICENSE"
  if [[ -f $COMPLETION_SRC ]]; then
    cp "$COMPLETION_SRC" "$stage/$COMPLETION"
    chmod 0755 "$stage/$COMPLETION"
  fi
  mapfile -t members < <(archive_members "$t")

  rm -f "$archive"
  if [[ $archive == *.zip ]]; then
    make_zip "$archive" "$stage" "${members[@]}"
  else
    make_tar_gz "$archive" "$stage" "${members[@]}"
  fi
  rm -rf "$stage"
  (cd "$dist" && echo "$(sha256_of "${archive##*/}")  ${archive##*/}" >"${archive##*/}.sha256")
  echo "    packed ${members[*]} into $archive"
}

# --- the manifest -------------------------------------------------------------------------

# Rewrites spec.version and every platform's uri and sha256. $1 = tag, $2 = file of
# "os/arch uri sha256" lines, one per platform. Fails unless every platform is rewritten.
rewrite_manifest() {
  local tag=$1 table=$2 tmp
  tmp=$(mktemp)
  if ! awk -v tag="$tag" -v placeholder="$UNRELEASED_SHA" '
      NR == FNR { uri[$1] = $2; sum[$1] = $3; next }
      /^  version:/ && !in_platforms { print "  version: " tag; next }
      /^  platforms:/ { in_platforms = 1 }
      in_platforms && /^  - / { os = ""; arch = "" }
      in_platforms && /^ +os:/ { os = $2 }
      in_platforms && /^ +arch:/ { arch = $2 }
      in_platforms && /^    uri:/ {
        key = os "/" arch
        if (!(key in uri)) { print "no release target for platform " key > "/dev/stderr"; failed = 1; exit 1 }
        print "    uri: " uri[key]; next
      }
      in_platforms && /^    sha256:/ {
        note = (sum[key] == placeholder) ? " # unreleased" : ""
        print "    sha256: \"" sum[key] "\"" note; done[key] = 1; next
      }
      { print }
      END {
        if (failed) exit 1
        for (key in uri) if (!(key in done)) { print "platform " key " not found in the manifest" > "/dev/stderr"; exit 1 }
      }' "$table" "$manifest" >"$tmp"; then
    rm -f "$tmp"
    die "could not rewrite $manifest (it must keep the layout of the committed one)"
  fi
  cat "$tmp" >"$manifest" # keeps the file's mode
  rm -f "$tmp"
}

# --- main ---------------------------------------------------------------------------------

caller_pwd=$PWD
cd "$(dirname "$0")/.."

tag="" dry_run=0 no_build=0 dist="" manifest="" binary="" requested=()
while (($#)); do
  case $1 in
    --dry-run) dry_run=1 ;;
    --no-build) no_build=1 ;;
    --targets)
      shift
      (($#)) || die "--targets needs a value"
      while (($#)) && [[ $1 != -* && ! $1 =~ ^v[0-9] ]]; do # stop at an option or the TAG
        IFS=', ' read -ra parts <<<"$1"
        requested+=("${parts[@]}")
        shift
      done
      continue ;;
    --targets=*) IFS=', ' read -ra parts <<<"${1#--targets=}"; requested+=("${parts[@]}") ;;
    --dist) shift; dist=${1:?--dist needs a directory} ;;
    --manifest) shift; manifest=${1:?--manifest needs a file} ;;
    --binary) shift; binary=${1:?--binary needs a file} ;;
    -h | --help) usage ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [[ -z $tag ]] || die "one TAG only (got $tag and $1)"; tag=$1 ;;
  esac
  shift
done
[[ -n $tag ]] || usage

abs() { [[ $1 == /* ]] && echo "$1" || echo "$caller_pwd/$1"; }
dist=$(abs "${dist:-$PWD/dist}")
[[ -z $binary ]] || { binary=$(abs "$binary"); [[ -x $binary ]] || die "--binary $binary: not an executable file"; }
manifest=$(abs "${manifest:-$PWD/krew-manifest.yaml}")
[[ -f $manifest ]] || die "no manifest at $manifest"
[[ -f LICENSE ]] || die "no LICENSE in $PWD"

version=$(awk -F'"' '/^\[/ { in_package = ($0 == "[package]") } in_package && /^version *=/ { print $2; exit }' Cargo.toml)
[[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
  die "TAG must be a semantic version with a leading v, like v$version (got $tag)"
[[ $tag == "v$version" ]] ||
  die "TAG $tag does not match Cargo.toml's version $version: set the version there first"
homepage=$(sed -n 's/^  homepage: *//p' "$manifest" | tr -d '"')
[[ $homepage == https://github.com/* ]] || die "spec.homepage in $manifest must be the GitHub repository"

host=$(host_target)
installed=$(installed_targets)

# Targets to build; each platform's target for the manifest (the release target unless a
# stand-in was requested for it).
if ((${#requested[@]} == 0)); then requested=("${RELEASE_TARGETS[@]}"); fi
targets=()
declare -A target_of_platform=()
for t in "${RELEASE_TARGETS[@]}"; do target_of_platform[$(platform_of "$t")]=$t; done
declare -A requested_platform=()
for t in "${requested[@]}"; do
  [[ $t == host ]] && t=$host
  [[ " ${RELEASE_TARGETS[*]} ${STAND_IN_TARGETS[*]} " == *" $t "* ]] ||
    die "unsupported target $t (supported: ${RELEASE_TARGETS[*]} ${STAND_IN_TARGETS[*]})"
  p=$(platform_of "$t")
  [[ -z ${requested_platform[$p]:-} ]] || die "two targets for $p: ${requested_platform[$p]} and $t"
  requested_platform[$p]=$t
  target_of_platform[$p]=$t
  targets+=("$t")
done

declare -A reason_of=()
for t in "${targets[@]}"; do reason_of[$t]=$(skip_reason "$t"); done
if [[ -n $binary ]]; then
  ((${#targets[@]} == 1)) || die "--binary packs one target: name it with --targets"
  reason_of[${targets[0]}]=""
fi

# The plan (also the dry run's whole output; tests/krew_manifest.rs reads its
# "archive:", "uri:", "packs:" and "lacks:" lines).
mode="builds and packs, then rewrites the manifest"
((no_build)) && mode="builds nothing; rewrites the manifest from the archives in dist"
((dry_run)) && mode="dry run: nothing is built, packed or written"
echo "release $tag of $BIN ($mode)"
echo "  host:      $host (Rust targets installed: $(words <<<"$installed"))"
echo "  dist:      $dist"
echo "  manifest:  $manifest"
for t in "${targets[@]}"; do
  if ((no_build)); then
    what="use the archive in dist"
  elif [[ -n ${reason_of[$t]} ]]; then
    what="skip: ${reason_of[$t]}"
  else
    what="build"
  fi
  if [[ " ${STAND_IN_TARGETS[*]} " == *" $t "* ]]; then
    what="$what (glibc stand-in, not a release target)"
  fi
  echo
  echo "$(platform_of "$t")  $t  $what"
  echo "  archive: $(archive_of "$tag" "$t")"
  echo "  uri:     $(uri_of "$tag" "$t")"
  echo "  packs:   $(archive_members "$t" | words)"
  [[ -f $COMPLETION_SRC ]] ||
    echo "  lacks:   $COMPLETION ($COMPLETION_SRC does not exist yet)"
done
((dry_run)) && exit 0

mkdir -p "$dist"
built=() skipped=()
if ((!no_build)); then
  for t in "${targets[@]}"; do
    echo
    if [[ -n ${reason_of[$t]} ]]; then
      echo "==> $t: skipped: ${reason_of[$t]}"
      skipped+=("$t")
    else
      build_and_pack "$tag" "$t"
      built+=("$t")
    fi
  done
fi

table=$(mktemp)
trap 'rm -f "$table"' EXIT
unpublishable=()
for t in "${RELEASE_TARGETS[@]}"; do
  p=$(platform_of "$t")
  t=${target_of_platform[$p]}
  archive=$dist/$(archive_of "$tag" "$t")
  if [[ -f $archive ]]; then
    sum=$(sha256_of "$archive")
  else
    sum=$UNRELEASED_SHA
    unpublishable+=("$p: no $(archive_of "$tag" "$t") in dist (sha256 left as the unreleased placeholder)")
  fi
  if [[ " ${STAND_IN_TARGETS[*]} " == *" $t "* ]]; then
    unpublishable+=("$p: points at the glibc stand-in $t, not a release target")
  fi
  echo "$p $(uri_of "$tag" "$t") $sum" >>"$table"
done
rewrite_manifest "$tag" "$table"
[[ -f $COMPLETION_SRC ]] ||
  unpublishable+=("$COMPLETION_SRC does not exist: the manifest copies $COMPLETION, so krew install would fail with \"no files in the plugin archive matched\"")

echo
echo "built:     ${built[*]:-(none)}"
echo "skipped:   ${skipped[*]:-(none)}"
for t in "${skipped[@]}"; do echo "  $t: ${reason_of[$t]}"; done
echo "manifest:  $manifest rewritten for $tag"
if ((${#unpublishable[@]})); then
  echo "not publishable yet:"
  for line in "${unpublishable[@]}"; do echo "  - $line"; done
else
  echo "publishable: upload $dist/*-$tag-* to the GitHub release $tag, then submit the manifest"
fi
