#!/usr/bin/env bash
# The action's install step (action.yml): puts kubectl-quota on the job's PATH.
#   KQ_INSTALL     auto (the one on PATH, else release), release, cargo, or path
#   KQ_VERSION     a release tag (v0.1.0) or latest
#   KQ_REPOSITORY  owner/name;  KQ_SERVER_URL  https://github.com or a mirror
# A release archive is checked against the .sha256 published beside it before it is unpacked.
set -euo pipefail
install=${KQ_INSTALL:-auto}
version=${KQ_VERSION:-latest}
repository=${KQ_REPOSITORY:-kubectl-quota/kubectl-quota}
server=${KQ_SERVER_URL:-https://github.com}
dest=${RUNNER_TEMP:-/tmp}/kubectl-quota
say() { echo "kubectl-quota install: $*"; }
fail() { echo "::error title=kubectl-quota install::$*"; exit 2; }

if [[ $install == auto || $install == path ]]; then
  if command -v kubectl-quota >/dev/null 2>&1; then
    say "using $(command -v kubectl-quota) ($(kubectl-quota version 2>/dev/null || echo 'version unknown'))"
    exit 0
  fi
  [[ $install == path ]] && fail "install: path, but kubectl-quota is not on PATH"
  install=release
fi

mkdir -p "$dest/bin"
case $install in
  release)
    case "${RUNNER_OS:-Linux}/${RUNNER_ARCH:-X64}" in
      Linux/X64) target=x86_64-unknown-linux-musl ;;
      Linux/ARM64) target=aarch64-unknown-linux-musl ;;
      macOS/X64) target=x86_64-apple-darwin ;;
      macOS/ARM64) target=aarch64-apple-darwin ;;
      *) fail "no release archive for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}: use install: cargo" ;;
    esac
    if [[ $version == latest ]]; then
      # The latest release's page redirects to its tag.
      url=$(curl -fsSL -o /dev/null -w '%{url_effective}' "$server/$repository/releases/latest") || fail "cannot find the latest release of $repository"
      version=${url##*/}
    fi
    archive=kubectl-quota-$version-$target.tar.gz
    base=$server/$repository/releases/download/$version
    say "downloading $base/$archive"
    work=$(mktemp -d)
    # Removed however the step ends: a refused download or checksum leaves no archive behind.
    trap 'rm -rf "$work"' EXIT
    curl -fsSL --retry 3 -o "$work/$archive" "$base/$archive" || fail "cannot download $base/$archive"
    curl -fsSL --retry 3 -o "$work/$archive.sha256" "$base/$archive.sha256" || fail "cannot download $base/$archive.sha256"
    want=$(cut -d' ' -f1 <"$work/$archive.sha256")
    if command -v sha256sum >/dev/null; then got=$(sha256sum "$work/$archive" | cut -d' ' -f1); else got=$(shasum -a 256 "$work/$archive" | cut -d' ' -f1); fi
    [[ $got == "$want" ]] || fail "$archive: sha256 $got, but the release says $want"
    tar -xzf "$work/$archive" -C "$dest/bin" kubectl-quota
    rm -rf "$work"
    ;;
  cargo)
    ref=()
    [[ $version != latest ]] && ref=(--tag "$version")
    cargo install --locked --root "$dest" --git "$server/$repository" "${ref[@]}" kubectl-quota || fail "cargo install failed"
    ;;
  *) fail "install: $install is not one of auto, release, cargo, path" ;;
esac
# For the next steps; and for the rest of this one.
echo "$dest/bin" >>"${GITHUB_PATH:-/dev/null}"
export PATH=$dest/bin:$PATH
say "installed $(kubectl-quota version)"
