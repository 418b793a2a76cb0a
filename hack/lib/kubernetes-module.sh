# Sourced by hack/install-envtest.sh and hack/install-twin.sh.
#
# kubernetes_module DIR NAME VERSION CMD...
# writes, in DIR, a wrapper module NAME that requires k8s.io/kubernetes at
# VERSION and imports its commands CMD (kube-apiserver, kube-scheduler, ...),
# and tidies it. k8s.io/kubernetes points its k8s.io/* dependencies at
# ./staging in its own repository; outside it they must resolve to the
# published v0.<minor>.<patch>, so its replace block is rewritten so.
# Sets k8s_version_flags, the -ldflags that stamp the release.
kubernetes_module() {
  local dir=$1 name=$2 k8s=$3 minor staging gomod cmd pkg
  shift 3
  minor=${k8s#*.}
  minor=${minor%%.*}
  staging=v0.$minor.${k8s##*.}
  say "downloading k8s.io/kubernetes v$k8s"
  gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@v$k8s" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f $gomod ]] || { say "k8s.io/kubernetes@v$k8s is not available from the module proxy"; exit 1; }
  {
    echo "module airunway-render.local/$name"
    echo "go 1.26.0"
    echo "require k8s.io/kubernetes v$k8s"
    sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#replace \1 => \1 '"$staging"'#p' "$gomod"
  } >"$dir/go.mod"
  {
    printf 'package main\n\nimport (\n'
    for cmd in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"; done
    printf ')\n'
  } >"$dir/deps.go"
  (cd "$dir" && go mod tidy >&2)
  k8s_version_flags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    k8s_version_flags+=" -X $pkg.gitVersion=v$k8s -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
}
