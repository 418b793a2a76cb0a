// Package argocdcmp is a test harness that runs an Argo CD Config Management
// Plugin (CMP) the way Argo CD's repo-server and argocd-cmp-server sidecar
// would, without Argo CD.
//
// # Why
//
// No argocd binary can be built in this project's environment, yet our CMP
// must behave under Argo CD's exact rules: which environment variables it
// sees and in which order, which directory it runs in, what happens to file
// modes, how its stdout is cut into objects, what failures look like. This
// package re-implements those rules from the Argo CD source so tests can run
// a plugin.yaml against a repository directory and assert on the result.
//
// # What it reproduces
//
// The behaviour was read from Argo CD v3.6.1 (the module zip
// github.com/argoproj/argo-cd/v3@v3.6.1) and re-implemented here; no Argo CD
// code is copied. Each function names the Argo CD file and function it
// follows. In summary:
//
//   - plugin.yaml parsing and validation: cmpserver/plugin/config.go
//     (PluginConfig, ReadPluginConfig, ValidatePluginConfig, Address) and
//     util/config/reader.go (YAML→JSON, non-strict encoding/json). See
//     LoadPlugin.
//   - the request environment: reposerver/repository/repository.go (newEnv,
//     newEnvRepoQuery, getPluginEnvs, getPluginParamEnvs, parseKubeVersion,
//     populatePluginAppDetails) and pkg/apis/application/v1alpha1/types.go
//     (Env.Envsubst, ApplicationSourcePluginParameter.MarshalJSON,
//     ApplicationSourcePluginParameters.Environ, escaped); the sidecar side,
//     os.Environ() followed by the request entries, from
//     cmpserver/plugin/plugin.go (generateManifest, environ) and
//     util/cmp/stream.go (toEnvEntry). See PluginEnv.
//   - which plugin serves an Application: GetAppSourceType
//     (reposerver/repository/repository.go) and util/app/discovery/discovery.go
//     (Discover, AppType, DetectConfigManagementPlugin, cmpSupports,
//     matchRepositoryCMP), and Service.matchRepository on the sidecar
//     (fileName via filepath.Glob, find.glob via github.com/mattn/go-zglob
//     v0.0.6, find.command). See Discover.
//   - the repository copy: the repo-server archives the repository root
//     (util/io/files/tar.go tgzFile via util/tgzstream.CompressFiles,
//     util/cmp/stream.go SendRepoStream) and the sidecar unpacks it into
//     <ARGOCD_CMP_WORKDIR or TMPDIR>/_cmp_server/<uuid> (files.Untgz with
//     preserveFileMode, common.GetCMPWorkDir, files.CreateTempDir), after the
//     repo-server's out-of-bounds symlink check (util/app/path/path.go). The
//     .git directory is not excluded by default (--plugin-tar-exclude is
//     empty), so the plugin receives it.
//   - running commands: cmpserver/plugin/plugin.go runCommand (argv, cwd,
//     env, process group, SIGTERM/5s/SIGKILL, the CmdError message format,
//     the "Plugin command returned zero output" warning, the trailing
//     newline trim), generateManifest (init then generate) and
//     getParametersAnnouncement (dynamic then static); the request deadline
//     with the 100ms cmpTimeoutBuffer (util/buffered_context).
//   - output handling: gitops-engine pkg/utils/kube SplitYAMLToString and
//     SplitYAML (via k8s.io/apimachinery's YAMLOrJSONDecoder, as upstream),
//     then runConfigManagementPluginSidecars and the list flattening of
//     GenerateManifests.
//   - error wording and wrapping, up to the repo-server's GenerateManifests
//     ("CMP processing failed for application ...: error generating
//     manifests in cmp: rpc error: code = Unknown desc = error generating
//     manifests: `argv` failed exit status N: stderr").
//
// # Where the documentation and the code differ
//
// The harness follows the code. Known differences in v3.6.1:
//
//   - discover.find.command runs in the application directory, not the
//     repository root the docs describe.
//   - the docs say each CMP command is limited by ARGOCD_EXEC_TIMEOUT and
//     then ARGOCD_EXEC_FATAL_TIMEOUT; runCommand uses neither: it is bounded
//     only by the request deadline, and the TERM→KILL pause is a fixed 5s.
//   - the docs say plugin env values interpolate "system and build
//     variables"; Envsubst only sees the build variables (ARGOCD_APP_*,
//     KUBE_VERSION, KUBE_API_VERSIONS), so $HOME or $PATH expand to "".
//   - ARGOCD_APP_PARAMETERS is marshalled from a map, so its keys come out
//     sorted: [{"map":{...},"name":"..."}], not name-first as in the docs.
//   - only the first configured discover method is evaluated (the docs'
//     comment "If every configured discovery tool matches" notwithstanding).
//   - a plugin named in spec.source.plugin.name is still subject to its
//     discover rule when it has one: if discovery does not match, the
//     request fails with "could not find cmp-server plugin with name ...".
//
// # What it leaves out
//
// No gRPC, no Unix sockets, no gzip and chunked streaming, no checksums:
// each "RPC" is a function call that receives an in-memory tar of the
// repository. The harness hosts exactly one plugin, so socket listing and
// multi-plugin selection are reduced to that plugin. No Git: the repository
// is a directory, the revision is whatever App.Revision says, and git
// credentials are just Options.GitCredsEnv. Also not reproduced:
// .argocd-source*.yaml overrides (mergeSourceParameters; the harness
// refuses to run when such a file is present), manifest-generate-paths
// (--plugin-use-manifest-generate-paths), the manifest cache, resource
// tracking labels/annotations, the cmp-server's start-up wipe of its work
// directory, logging, tracing and metrics. doublestar's {a,b} syntax is not
// supported in Options.TarExcludedGlobs. The error text for a plugin name
// that matches no socket is reconstructed from the dial path, and Go type
// names inside encoding/json errors differ from Argo CD's.
//
// Commands are built by Options.Command, so a test can run the plugin inside
// a container (e.g. podman run with the request directory mounted at the
// same path); error messages still show the plugin's argv, as Argo CD's
// would. The default resolves argv[0] with the harness process's PATH (as
// os/exec does), not BaseEnv's.
package argocdcmp
